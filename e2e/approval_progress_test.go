package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestApprovalWaitKeepsHostWaiting: a Claude Desktop style host (the
// TypeScript SDK over stdio, no elicitation, a request timeout shorter than
// the person takes) keeps waiting while the ask is on the console, because
// the server sends notifications/progress for the waiting call and the host
// resets its timeout on progress; the same host without resetting times
// out, which is what the progress prevents. (Scaled down: progress every
// second, a 2 s host timeout, an answer after 4 s; the defaults are 10 s,
// 60 s and whatever the person takes.)
func TestApprovalWaitKeepsHostWaiting(t *testing.T) {
	dir := tsDir(t)
	for _, tc := range []struct {
		name  string
		reset string
		ok    bool
	}{
		{"resets on progress", "1", true},
		{"without progress resets", "0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := freePort(t)
			f := newFixture(t, fmt.Sprintf("profile = \"interactive-dev\"\n[approval]\nconsole = \"127.0.0.1:%d\"\nprogress_seconds = 1\n", port))
			outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
			type result struct {
				OK       bool   `json:"ok"`
				Text     string `json:"text"`
				Error    string `json:"error"`
				Progress int    `json:"progress"`
			}
			done := make(chan result, 1)
			go func() {
				out, errOut, code := runNode(t, dir, []string{"HOME=" + f.Root}, "progress.mjs", binary, f.Config, outside, "2000", tc.reset)
				var r result
				if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil || code != 0 {
					r.Error = fmt.Sprintf("node exit %d: %q %s", code, out, errOut)
				}
				done <- r
			}()
			tokenFile := f.consoleToken()
			for i := 0; i < 500; i++ { // the server node starts writes the token once it listens
				if st, err := os.Stat(tokenFile); err == nil && st.Size() > 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			cc := openConsole(t, f, port)
			s := cc.waitPending(1)
			asked := time.Now()
			select {
			case r := <-done:
				if tc.ok {
					t.Fatalf("the host gave up before the person answered: %+v", r)
				}
				if !strings.Contains(strings.ToLower(r.Error), "timed out") {
					t.Fatalf("without progress resets: %+v, want a timeout", r)
				}
				return
			case <-time.After(4 * time.Second):
			}
			if !tc.ok {
				t.Fatal("the host kept waiting past its timeout without resetting on progress: the test cannot tell progress apart")
			}
			if code := cc.decide(url.Values{"id": {s.Pending[0].ID}, "decision": {"allow_once"}}); code != 200 {
				t.Fatalf("decide: %d", code)
			}
			r := <-done
			if !r.OK || r.Text != "O\n" {
				t.Fatalf("after %s the call came back %+v", time.Since(asked).Round(time.Millisecond), r)
			}
			if r.Progress < 3 {
				t.Fatalf("%d progress notifications in 4 s at one a second", r.Progress)
			}
		})
	}
}
