package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestReadFileOverStdio(t *testing.T) {
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			f := newFixture(t, prodDenyConfig)
			f.write(t, "src/main.go", "package main\n\nfunc main() {}\n")
			f.write(t, "deploy/prod/app.toml", "secret = 1\n")
			f.write(t, ".env", "TOKEN=abc\n")
			outside := f.write(t, filepath.Join(f.Root, "outside.txt"), "outside\n")
			if err := os.Symlink(outside, filepath.Join(f.Workspace, "link.txt")); err != nil {
				t.Fatal(err)
			}
			f.write(t, "bin.dat", "\x00\x01\x02binary")
			var lines []string
			for i := 1; i <= 100; i++ {
				lines = append(lines, "line "+itoa(i))
			}
			f.write(t, "hundred.txt", strings.Join(lines, "\n")+"\n")

			c := stdioClient(t, f, era)
			if _, ok := toolNames(t, c)["read_file"]; !ok {
				t.Fatal("read_file not listed")
			}

			res := call(t, c, "read_file", map[string]any{"path": "src/main.go"})
			if res.IsError || text(res) != "package main\n\nfunc main() {}\n" {
				t.Fatalf("allowed read: isError=%v text=%q", res.IsError, text(res))
			}
			var meta struct {
				Path       string `json:"path"`
				StartLine  int    `json:"start_line"`
				EndLine    int    `json:"end_line"`
				TotalLines int    `json:"total_lines"`
				Truncated  bool   `json:"truncated"`
			}
			structured(t, res, &meta)
			if meta.TotalLines != 3 || meta.StartLine != 1 || meta.EndLine != 3 {
				t.Fatalf("structured: %+v", meta)
			}

			res = call(t, c, "read_file", map[string]any{"path": "hundred.txt", "offset": 10, "limit": 3})
			if res.IsError || text(res) != "line 10\nline 11\nline 12\n" {
				t.Fatalf("window: %q", text(res))
			}

			refusals := []struct {
				name, path, want string
			}{
				{"denied by rule", "deploy/prod/app.toml", "no-prod-config"},
				{"credential", ".env", "deny_credential_flow"},
				{"outside the workspace", outside, "approval_unavailable"},
				{"symlink out of the workspace", "link.txt", "approval_unavailable"},
				{"dotdot out of the workspace", "../outside.txt", "approval_unavailable"},
			}
			for _, r := range refusals {
				res := call(t, c, "read_file", map[string]any{"path": r.path})
				if !res.IsError || !strings.Contains(text(res), r.want) || strings.Contains(text(res), "outside\n") {
					t.Errorf("%s: isError=%v text=%q, want refusal naming %s", r.name, res.IsError, text(res), r.want)
				}
			}

			res = call(t, c, "read_file", map[string]any{"path": "bin.dat"})
			if !res.IsError || !strings.Contains(text(res), "binary") {
				t.Errorf("binary file: %q", text(res))
			}
			for _, bad := range []map[string]any{
				{"path": "src/main.go", "bogus": 1},
				{"path": 42},
				{},
				{"path": "src/main.go", "offset": "x"},
			} {
				res := call(t, c, "read_file", bad)
				if !res.IsError || !strings.Contains(text(res), "invalid_arguments") {
					t.Errorf("bad arguments %v: %q", bad, text(res))
				}
			}

			// One decision line per decided request (invalid calls included),
			// one outcome line per call that ran.
			var decisions, outcomes int
			for _, l := range f.auditLines(t) {
				switch l["event"] {
				case "decision":
					decisions++
					if l["reason_code"] == nil || l["effect"] == nil || l["time"] == nil {
						t.Errorf("audit line lacks fields: %v", l)
					}
				case "outcome":
					outcomes++
				}
			}
			if want := 2 + len(refusals) + 1 + 4; decisions != want {
				t.Errorf("audit has %d decision lines, want %d", decisions, want)
			}
			if want := 3; outcomes != want { // two reads and the binary refusal ran
				t.Errorf("audit has %d outcome lines, want %d", outcomes, want)
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
