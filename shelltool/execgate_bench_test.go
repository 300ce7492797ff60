package shelltool

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
)

// BenchmarkExecGateEvent is the server's handling of one exec event, the
// audit line aside (BenchmarkMidActionExec in server has that share): the
// identity table looked up, the requests built (names, AnalyzeArgv) and
// each decided under interactive-dev with the deny rules of
// TestExecGateDenyRules.
func BenchmarkExecGateEvent(b *testing.B) {
	ws := b.TempDir()
	p := policyFor(b, ws, denyRulesTOML)
	var c programCache
	table := c.table(p, "/usr/local/bin:/usr/bin:/bin")
	env := &toolkit.Env{Policy: p, Principal: "bench", MidAction: func(_ context.Context, r grants.Request, _ grants.Stage) (grants.Decision, error) {
		d := p.DecideExec(r)
		if d.Effect != grants.Allow {
			return d, &toolkit.MidActionRefused{Decision: d}
		}
		return d, nil
	}}
	event := func(exe string, argv ...string) sandbox.ExecEvent {
		var st syscall.Stat_t
		if err := syscall.Stat(exe, &st); err != nil {
			b.Skipf("%s: %v", exe, err)
		}
		return sandbox.ExecEvent{PID: 7, Exe: exe, Dev: st.Dev, Ino: st.Ino, Size: st.Size, Argv: argv, ExecPath: argv[0], Cwd: ws}
	}
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		b.Skip("git not installed")
	}
	// A workspace root of 32 entries: rm -rf of two of them lists it
	// (raiseEmptying) on every exec, rm -rf of one does not.
	npmEvent := event("/usr/bin/env", "/usr/bin/env", "node", "/usr/bin/npm", "i", "lodash")
	npmEvent.ExecPath = "/usr/bin/npm"
	for i := range 32 {
		if err := os.Mkdir(filepath.Join(ws, "d"+strconv.Itoa(i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		ev      sandbox.ExecEvent
		refused bool // by the deny rule no-rm (decided all the same)
	}{
		{"true", event("/usr/bin/true", "/bin/true"), false},
		{"git-status", event("/usr/bin/git", "git", "status", "--short"), false},
		{"cc", event("/usr/bin/sh", "/bin/sh", "-c", "cc -c -o build/x.o src/x.c"), false},
		{"rm-r-one", event("/usr/bin/rm", "rm", "-rf", "d0"), true},
		{"rm-r-two", event("/usr/bin/rm", "rm", "-rf", "d0", "d1"), true},
		// npm i through its shebang's env: a package.install decided too,
		// with the project's files read from its folder on every exec.
		{"npm-i", npmEvent, false},
	} {
		// first: the first exec of these words in a call; again: the
		// same exec again in the call (its requests kept).
		b.Run(tc.name+"/first", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if execGate(context.Background(), env, &lineLog{}, nil, table, nil, callFacts{})(tc.ev) == tc.refused {
					b.Fatalf("%v refused", tc.ev.Argv)
				}
			}
		})
		b.Run(tc.name+"/again", func(b *testing.B) {
			gate := execGate(context.Background(), env, &lineLog{}, nil, table, nil, callFacts{})
			b.ReportAllocs()
			for b.Loop() {
				if gate(tc.ev) == tc.refused {
					b.Fatalf("%v refused", tc.ev.Argv)
				}
			}
		})
	}
}
