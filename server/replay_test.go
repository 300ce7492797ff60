package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/grants"
)

// TestReplay: recorded decisions decided again under a stricter and a
// looser policy give exactly the expected changes; a person's approval the
// new policy denies is marked; a path moves between workspace.files.* and
// filesystem.* with the new workspace.
func TestReplay(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	compile := func(body, workspace string) *grants.Policy { return compilePolicy(t, root, workspace, body) }
	rec := func(seq int, time, capability, path, risk, effect, reason, rule string) string {
		b, _ := json.Marshal(map[string]any{"seq": seq, "time": time, "event": "decision", "tool": "read_file",
			"capability": capability, "target": map[string]string{"tool_name": "read_file", "path": path},
			"risk_level": risk, "effect": effect, "reason_code": reason, "rule_id": rule})
		return string(b)
	}
	log := strings.Join([]string{
		`{"seq":0,"prev":"00","event":"checkpoint"}`,
		rec(1, "2026-12-01T10:00:00Z", "workspace.files.read", ws+"/sub/a.go", "low", "allow", "matched_allow", "interactive-dev/allow-workspace-read"),
		rec(2, "2026-12-01T11:00:00Z", "filesystem.read", root+"/notes.txt", "high", "allow", "approved", "interactive-dev/ask-outside-workspace"),
		rec(3, "2026-12-01T12:00:00Z", "workspace.files.write", ws+"/sub/b.go", "medium", "deny", "declined", "ask-writes"),
		`{"seq":4,"event":"decision","tool":"read_file","effect":"deny","reason_code":"invalid_arguments"}`,
		rec(5, "2026-12-01T13:00:00Z", "workspace.files.read", ws+"/sub/"+strings.Repeat("x", 10)+"…[5000 bytes, sha256:ab]", "low", "allow", "matched_allow", "r"),
		`{"seq":6,"event":"outcome","tool":"read_file"}`,
	}, "\n") + "\n"

	tests := []struct {
		name     string
		policy   *grants.Policy
		since    string
		replayed int
		want     []string
	}{
		{"the same policy", compile(`profile = "interactive-dev"
[[rules.ask]]
rule_id = "ask-writes"
capability = "workspace.files.write"`, ws), "", 3, nil},
		{"stricter", compile(`profile = "interactive-dev"
[[rules.deny]]
rule_id = "no-sub"
capability = "*"
target = { path = "sub/**" }
[[rules.deny]]
rule_id = "no-notes"
capability = "filesystem.read"
target = { path = "`+root+`/notes.txt" }`, ws), "", 3, []string{
			"1 workspace.files.read allow→deny no-sub",
			"2 filesystem.read ask→deny no-notes approved approval_now_denied",
			"3 workspace.files.write ask→deny no-sub declined",
		}},
		{"looser", compile(`mode = "permissive"`, ws), "", 3, []string{
			"2 filesystem.read ask→allow mode approved",
			"3 workspace.files.write ask→allow mode declined",
		}},
		// The workspace narrows to ws/sub: the outside file stays
		// filesystem.read, and the workspace write stays inside.
		{"since, narrower workspace", compile(`mode = "strict"
[[rules.allow]]
rule_id = "all-ws"
capability = "workspace.files.*"`, filepath.Join(ws, "sub")), "2026-12-01T10:30:00Z", 2, []string{
			"2 filesystem.read ask→deny mode approved approval_now_denied",
			"3 workspace.files.write ask→allow all-ws declined",
		}},
		{"wider workspace: a filesystem path becomes workspace.files", compile(`mode = "strict"
[[rules.allow]]
rule_id = "all-ws"
capability = "workspace.files.read"`, root), "", 3, []string{
			"2 workspace.files.read ask→allow all-ws approved",
			"3 workspace.files.write ask→deny mode declined",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var since time.Time
			if tc.since != "" {
				since, _ = time.Parse(time.RFC3339, tc.since)
			}
			rep, err := Replay(strings.NewReader(log), tc.policy, since)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range rep.Changes {
				s := fmt.Sprintf("%d %s %s→%s %s %s", c.Seq, c.Capability, c.Old.Effect, c.New.Effect, c.New.RuleID, c.Answer)
				if c.ApprovalNowDenied {
					s += " approval_now_denied"
				}
				got = append(got, strings.TrimSpace(s))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") || rep.Replayed != tc.replayed {
				t.Fatalf("replayed %d (want %d), changes:\n%s\nwant:\n%s", rep.Replayed, tc.replayed, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestReplayExecStage: a program a running command started is decided
// again as exec-time decisions are (DecideExec): the mode does not refuse
// it, a deny rule naming it does.
func TestReplayExecStage(t *testing.T) {
	root := t.TempDir()
	compile := func(body string) *grants.Policy { return compilePolicy(t, root, root, body) }
	log := `{"seq":1,"time":"2026-12-01T10:00:00Z","event":"decision","tool":"execute_terminal_command","capability":"process.exec",` +
		`"target":{"tool_name":"execute_terminal_command","resource":"curl","command":"curl example.test"},"risk_level":"medium",` +
		`"execution_surface":"sandbox","stage":"exec","effect":"allow","reason_code":"matched_allow","rule_id":"` + grants.RuleExecUnderCommandLine + `"}` + "\n"
	for _, tc := range []struct {
		name, config string
		changes      int
	}{
		{"strict mode alone", `mode = "strict"`, 0},
		{"a deny rule naming it", "mode = \"strict\"\n[[rules.deny]]\nrule_id = \"no-curl\"\ncapability = \"process.exec\"\ntarget = { resource = \"curl\" }", 1},
	} {
		rep, err := Replay(strings.NewReader(log), compile(tc.config), time.Time{})
		if err != nil || rep.Replayed != 1 || len(rep.Changes) != tc.changes {
			t.Errorf("%s: %+v %v", tc.name, rep, err)
		}
	}
}

// compilePolicy compiles config text with home and workspace pinned.
func compilePolicy(t *testing.T, home, workspace, body string) *grants.Policy {
	t.Helper()
	cfg, err := grants.Parse([]byte(body), "", workspace)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
