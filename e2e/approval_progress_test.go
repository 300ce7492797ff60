package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
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
// second, a 3 s host timeout (two missed notifications of slack on a loaded
// machine), an answer after 6 s; the defaults are 10 s,
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
				out, errOut, code := runNode(t, dir, []string{"HOME=" + f.Root}, "progress.mjs", binary, f.Config, outside, "3000", tc.reset)
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
			case <-time.After(6 * time.Second):
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
				t.Fatalf("%d progress notifications in 6 s at one a second", r.Progress)
			}
		})
	}
}

// TestApprovalWaitNinetySeconds is the same host at full size: the
// TypeScript SDK's own default request timeout (60 s), the server's default
// progress interval (10 s), and a person who answers on the console after
// 90 s. With resetTimeoutOnProgress the call completes; without it the host
// gives up at 60 s. Both hosts start before t.Parallel, so their 90 s run
// beside the package's serial tests instead of adding to its wall time
// (top-level parallel tests resume only after every serial test); the
// person's answer is given in the background at 90 s, whatever the
// serial tests are doing then.
func TestApprovalWaitNinetySeconds(t *testing.T) {
	if testing.Short() {
		t.Skip("90 s of waiting (-short)")
	}
	dir := tsDir(t)
	const answerAfter = 90 * time.Second
	type host struct {
		name  string
		reset bool
		done  chan longWait
	}
	hosts := []*host{{name: "resets on progress", reset: true}, {name: "without progress resets"}}
	for _, h := range hosts {
		port := freePort(t)
		// No progress_seconds: the default (10 s) is what is tested.
		f := newFixture(t, fmt.Sprintf("profile = \"interactive-dev\"\n[approval]\nconsole = \"127.0.0.1:%d\"\n", port))
		outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
		h.done = make(chan longWait, 1)
		answer := time.Duration(0) // the host without resets is never answered
		if h.reset {
			answer = answerAfter
		}
		go func() { h.done <- waitLong(dir, f, port, outside, h.reset, answer) }()
	}
	t.Parallel()
	for _, h := range hosts {
		t.Run(h.name, func(t *testing.T) {
			r := <-h.done
			if r.setup != "" {
				t.Fatal(r.setup)
			}
			took := time.Duration(r.MS) * time.Millisecond
			t.Logf("%s: the call came back after %s with %d progress notifications: %+v", h.name, took.Round(time.Millisecond), r.Progress, r)
			if !h.reset {
				if r.OK || !strings.Contains(strings.ToLower(r.Error), "timed out") {
					t.Fatalf("without progress resets: %+v, want the SDK's timeout", r)
				}
				if took < 59*time.Second || took > 75*time.Second {
					t.Fatalf("the host gave up after %s, want its default 60 s", took)
				}
				return
			}
			if !r.OK || r.Text != "O\n" {
				t.Fatalf("the host did not keep waiting for the person: %+v", r)
			}
			if took < answerAfter {
				t.Fatalf("the call completed after %s, before the person answered at %s", took, answerAfter)
			}
			if r.Progress < 8 { // one every 10 s for 90 s
				t.Fatalf("%d progress notifications in %s at one every 10 s", r.Progress, took)
			}
		})
	}
}

// longWait is one host's run in TestApprovalWaitNinetySeconds: progress.mjs's
// JSON line, or what went wrong around it (setup).
type longWait struct {
	OK       bool   `json:"ok"`
	Text     string `json:"text"`
	Error    string `json:"error"`
	Progress int    `json:"progress"`
	MS       int64  `json:"ms"`
	setup    string
}

// waitLong runs progress.mjs with the SDK's default timeout and, when
// answer > 0, allows the ask on the console that long after it was listed.
// It runs on its own goroutine while the test is paused in t.Parallel, so
// it reports failures in its result rather than through a *testing.T.
func waitLong(dir string, f *fixture, port int, path string, reset bool, answer time.Duration) longWait {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	flag := "0"
	if reset {
		flag = "1"
	}
	cmd := exec.CommandContext(ctx, "node", "progress.mjs", binary, f.Config, path, "default", flag)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+f.Root)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		return longWait{setup: fmt.Sprintf("node: %v", err)}
	}
	actx, stop := context.WithCancel(ctx) // the person stops waiting when the host has gone
	defer stop()
	answered := make(chan error, 1)
	go func() { answered <- answerLater(actx, f, port, answer) }()
	err := cmd.Wait()
	stop()
	var r longWait
	if jerr := json.Unmarshal([]byte(strings.TrimSpace(out.String())), &r); jerr != nil || err != nil {
		return longWait{setup: fmt.Sprintf("node: %v: %q %s", err, out.String(), errOut.String())}
	}
	if aerr := <-answered; aerr != nil && !errors.Is(aerr, context.Canceled) {
		r.setup = fmt.Sprintf("the console: %v (node said %+v; stderr %s)", aerr, r, errOut.String())
	}
	return r
}

// answerLater waits for the ask on the console and, answer after it was
// listed, allows it (answer 0: only checks that the ask was listed).
func answerLater(ctx context.Context, f *fixture, port int, answer time.Duration) error {
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var tok string
	for tok == "" { // the server writes the token once it listens
		if data, err := os.ReadFile(f.consoleToken()); err == nil {
			tok = strings.TrimSpace(string(data))
		}
		if tok == "" && sleepCtx(ctx, 20*time.Millisecond) != nil {
			return fmt.Errorf("no console token: %w", ctx.Err())
		}
	}
	get := func(path string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	var s consoleState
	for len(s.Pending) == 0 {
		body, err := get("/api/state")
		if err == nil {
			err = json.Unmarshal([]byte(body), &s)
		}
		if err != nil {
			return err
		}
		if len(s.Pending) == 0 && sleepCtx(ctx, 20*time.Millisecond) != nil {
			return fmt.Errorf("the ask was never listed: %w", ctx.Err())
		}
	}
	if answer == 0 {
		return nil
	}
	if err := sleepCtx(ctx, answer); err != nil {
		return err
	}
	page, err := get("/")
	if err != nil {
		return err
	}
	_, rest, ok := strings.Cut(page, `<meta name="csrf" content="`)
	if !ok {
		return fmt.Errorf("no CSRF token on the page")
	}
	csrf, _, _ := strings.Cut(rest, `"`)
	form := url.Values{"id": {s.Pending[0].ID}, "decision": {"allow_once"}}
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/decide", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("X-CSRF-Token", csrf)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("decide after %s: %s", answer, resp.Status)
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
