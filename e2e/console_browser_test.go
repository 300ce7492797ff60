package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// The approval console in a real browser: headless Chromium (Debian's
// chromium package) driven by playwright-core through e2e/ts/console.mjs.

const chromiumPath = "/usr/bin/chromium"

// browserDir returns e2e/ts, skipping when Chromium or playwright-core is
// not installed.
func browserDir(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		testkit.Missing(t, "%s is absent: install Debian's chromium (`apt-get install -y chromium`, as .ci/run does) to run the console browser test", chromiumPath)
	}
	dir, err := filepath.Abs("ts")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
		testkit.Missing(t, "e2e/ts/node_modules/playwright-core is absent: run `npm install --no-save` in e2e/ts (as .ci/run does) to run the console browser test")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("playwright-core is installed but node is not on PATH")
	}
	return dir
}

// browser is console.mjs: one JSON command a line in, one JSON answer out.
type browser struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startBrowser(t *testing.T, dir, home string) *browser {
	t.Helper()
	cmd := exec.Command("node", "console.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "CHROMIUM="+chromiumPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = testWriter{t}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	b.out.Buffer(make([]byte, 1<<20), 16<<20)
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	ready := b.read()
	t.Logf("Chromium %v (playwright-core) started", ready["version"])
	return b
}

func (b *browser) read() map[string]any {
	b.t.Helper()
	if !b.out.Scan() {
		b.t.Fatalf("console.mjs ended: %v", b.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(b.out.Bytes(), &m); err != nil {
		b.t.Fatalf("console.mjs said %q: %v", b.out.Text(), err)
	}
	if m["ok"] != true {
		b.t.Fatalf("console.mjs: %v", m["error"])
	}
	return m
}

func (b *browser) do(cmd string, args map[string]any) map[string]any {
	b.t.Helper()
	msg := map[string]any{"cmd": cmd}
	for k, v := range args {
		msg[k] = v
	}
	line, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(line, '\n')); err != nil {
		b.t.Fatal(err)
	}
	return b.read()
}

// loadFigures is what console.mjs reports about a page load.
type loadFigures struct {
	Status   int
	URL      string
	Text     string
	Requests []struct{ Method, URL, Type string }
	Res      []string `json:"resources"`
	MS       float64
	Nav      struct{ ResponseEnd, DOMContentLoaded, Load, TransferSize, BodySize float64 }
}

func asLoad(t *testing.T, m map[string]any) loadFigures {
	t.Helper()
	b, _ := json.Marshal(m)
	var l loadFigures
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// pageRequests are the requests a load made for the page itself: not the
// favicon the browser asks for on its own, nor the page's polling.
func (l loadFigures) pageRequests() []string {
	var out []string
	for _, r := range l.Requests {
		if strings.HasSuffix(r.URL, "/favicon.ico") || strings.Contains(r.URL, "/api/state") {
			continue
		}
		out = append(out, r.Method+" "+r.URL+" ("+r.Type+")")
	}
	return out
}

// attackerPage serves, on another local origin, a page that auto-submits a
// form to the console's decide endpoint, with a valid id and even the real
// CSRF token: only the request's cross-origin/cross-site nature is wrong.
func attackerPage(t *testing.T, consoleBase, csrf string, id *string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body>
<form id="f" method="post" action="%s/api/decide">
<input type="hidden" name="csrf" value="%s"><input type="hidden" name="id" value="%s"><input type="hidden" name="decision" value="allow_once">
</form><script>document.getElementById('f').submit()</script></body></html>`,
			html.EscapeString(consoleBase), html.EscapeString(csrf), html.EscapeString(*id))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestConsoleBrowser(t *testing.T) {
	dir := browserDir(t)
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			port := freePort(t)
			f := newFixture(t, fmt.Sprintf("profile = \"interactive-dev\"\n\n[approval]\nconsole = \"127.0.0.1:%d\"\n", port))
			outside := f.write(t, filepath.Join(f.Root, "outside-"+string(era)+".txt"), "outside content\n")
			c := stdioClient(t, f, era) // declares no elicitation: the console is the only channel

			tokenFile := f.consoleToken()
			st, err := os.Stat(tokenFile)
			if err != nil {
				t.Fatalf("console token file: %v", err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Fatalf("console token file mode %v, want 0600", st.Mode().Perm())
			}
			cc := openConsole(t, f, port) // the token from the file, and the page's CSRF token
			base := cc.base

			home := filepath.Join(f.Root, "browser-home")
			os.MkdirAll(home, 0o700)
			br := startBrowser(t, dir, home)

			// Without the token: refused, and nothing of the console shows.
			noTok := asLoad(t, br.do("open", map[string]any{"url": base + "/", "fresh": true}))
			if noTok.Status != 403 || strings.Contains(noTok.Text, "Pending") {
				t.Fatalf("console without the token: %d %q", noTok.Status, noTok.Text)
			}
			wrong := asLoad(t, br.do("open", map[string]any{"url": base + "/?token=not-the-token", "fresh": true}))
			if wrong.Status != 403 {
				t.Fatalf("console with a wrong token: %d %q", wrong.Status, wrong.Text)
			}

			// With the token: the server swaps it for a cookie scoped to a
			// fresh secret path and redirects there (cookies are not
			// separated by port, paths are).
			first := asLoad(t, br.do("open", map[string]any{"url": base + "/?token=" + url.QueryEscape(cc.tok)}))
			if first.Status != 200 || !strings.HasPrefix(first.URL, base+"/s/") || !strings.Contains(first.Text, "Nothing is waiting") {
				t.Fatalf("console with the token: %d at %s: %q", first.Status, first.URL, first.Text)
			}
			// A load of the page is one round trip: one document, complete
			// (styles and script inline), no further requests.
			re := asLoad(t, br.do("reload", nil))
			if got := re.pageRequests(); re.Status != 200 || len(got) != 1 || len(re.Res) != 0 {
				t.Fatalf("page load made requests %v, resources %v; want the one document", got, re.Res)
			}
			exchange := strings.ReplaceAll(strings.Join(first.pageRequests(), ", "), url.QueryEscape(cc.tok), "…")
			t.Logf("page load: token exchange [%s]; reload: %d request (%s), %d sub-resources, %.0f bytes, response end %.1f ms, DOMContentLoaded %.1f ms",
				exchange, len(re.pageRequests()), re.pageRequests()[0], len(re.Res), re.Nav.BodySize, re.Nav.ResponseEnd, re.Nav.DOMContentLoaded)

			type result struct {
				res *mcp.CallToolResult
				err error
			}
			// pendingAt reports when the console first lists a pending
			// request, polling its state every 5 ms, so the page's own delay
			// is told apart from the call's way to the console.
			pendingAt := func() chan time.Time {
				at := make(chan time.Time, 1)
				go func() {
					for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
						req, _ := http.NewRequest("GET", base+"/api/state", nil)
						req.Header.Set("Authorization", "Bearer "+cc.tok)
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							continue
						}
						var s consoleState
						json.NewDecoder(resp.Body).Decode(&s)
						resp.Body.Close()
						if len(s.Pending) > 0 {
							at <- time.Now()
							return
						}
					}
					close(at)
				}()
				return at
			}
			var shown, lags []time.Duration
			// measure waits for a new pending request to show on the page and
			// records how long after the call and after the console listed it.
			measure := func(start time.Time, at chan time.Time, text string) {
				t.Helper()
				br.do("waitText", map[string]any{"text": text, "timeoutMs": 10000})
				now := time.Now()
				listed, ok := <-at
				if !ok {
					t.Fatal("the console never listed the pending request")
				}
				shown = append(shown, now.Sub(start))
				lags = append(lags, now.Sub(listed))
			}
			startCall := func() (chan result, time.Time, chan time.Time) {
				done := make(chan result, 1)
				at := pendingAt()
				start := time.Now()
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					req := mcp.CallToolRequest{}
					req.Params.Name = "read_file"
					req.Params.Arguments = map[string]any{"path": outside}
					res, err := c.CallTool(ctx, req)
					done <- result{res, err}
				}()
				return done, start, at
			}
			stillPending := func(done chan result, id, what string) {
				t.Helper()
				select {
				case r := <-done:
					t.Fatalf("after %s the call finished: %v %v", what, r.err, r.res)
				case <-time.After(300 * time.Millisecond):
				}
				s := cc.state()
				if len(s.Pending) != 1 || s.Pending[0].ID != id {
					t.Fatalf("after %s the console lists %+v, want %s still pending", what, s.Pending, id)
				}
			}

			// 1. A call that needs approval appears on the open page by itself.
			done, start, at := startCall()
			measure(start, at, outside)
			pageText := br.do("text", nil)["text"].(string)
			for _, want := range []string{"read_file", outside, "interactive-dev/ask-outside-workspace", "Allow once", "Deny", "from onellm-e2e"} {
				if !strings.Contains(pageText, want) {
					t.Errorf("the page lacks %q:\n%s", want, pageText)
				}
			}
			// The rule sets no approval_expires_seconds: "for session" would
			// mean once, so it is not offered.
			if strings.Contains(pageText, "Allow for session") {
				t.Errorf("the page offers \"Allow for session\" for a rule without an expiry:\n%s", pageText)
			}
			s := cc.waitPending(1)
			id := s.Pending[0].ID

			// 2. A POST with the page's cookie and CSRF token but a wrong Origin.
			for _, origin := range []string{fmt.Sprintf("http://127.0.0.1:%d", port+1), "http://localhost:" + fmt.Sprint(port), "null"} {
				p := br.do("post", map[string]any{"url": base + "/api/decide",
					"headers": map[string]string{"Origin": origin, "X-CSRF-Token": cc.csrfHeader},
					"form":    map[string]string{"id": id, "decision": "allow_once"}})
				if p["status"] != float64(403) {
					t.Fatalf("POST with Origin %s: %v %v", origin, p["status"], p["body"])
				}
			}
			// The same from a script with the token in the header.
			req, _ := http.NewRequest("POST", base+"/api/decide", strings.NewReader(url.Values{"id": {id}, "decision": {"allow_once"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Authorization", "Bearer "+cc.tok)
			req.Header.Set("X-CSRF-Token", cc.csrfHeader)
			req.Header.Set("Origin", "http://evil.example")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 403 {
				t.Fatalf("POST with the token and a wrong Origin: %d", resp.StatusCode)
			}
			stillPending(done, id, "the wrong-Origin POSTs")

			// 3. Cross-site form posts from pages on other local origins, in
			// the browser that holds the console cookie: same site but
			// another port (127.0.0.1), and another site (localhost).
			evil := attackerPage(t, base, cc.csrfHeader, &id)
			evilPort := evil.Listener.Addr().(*net.TCPAddr).Port
			for _, page := range []string{evil.URL + "/", fmt.Sprintf("http://localhost:%d/", evilPort)} {
				x := br.do("crossSite", map[string]any{"url": page, "target": "/api/decide"})
				if x["status"] != float64(403) {
					t.Fatalf("cross-site form post from %s: %v %v", page, x["status"], x["body"])
				}
				t.Logf("form post from %s (Origin %v): %v %s", page, x["origin"], x["status"], strings.TrimSpace(fmt.Sprint(x["body"])))
			}
			stillPending(done, id, "the cross-site form posts")

			// 4. Allow once, clicked on the page: the waiting call completes.
			br.do("click", map[string]any{"card": outside, "button": "Allow once"})
			select {
			case r := <-done:
				if r.err != nil || r.res.IsError || text2(r.res) != "outside content\n" {
					t.Fatalf("approved call: %v %q", r.err, text2(r.res))
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the call did not complete after Allow once")
			}
			if l := lastDecision(t, f, "read_file"); l["reason_code"] != "approved" || l["approval_channel"] != "console" {
				t.Fatalf("audit: %v", l)
			}
			br.do("waitText", map[string]any{"text": "allow once", "timeoutMs": 10000}) // in the recent decisions

			// 5. Allow once held once: the same call is pending again; Deny
			// on the page refuses it.
			done, start, at = startCall()
			measure(start, at, "times out in")
			br.do("click", map[string]any{"card": outside, "button": "Deny"})
			select {
			case r := <-done:
				if r.err != nil || !r.res.IsError || !strings.Contains(text2(r.res), "declined") || strings.Contains(text2(r.res), "outside content") {
					t.Fatalf("denied call: %v %q", r.err, text2(r.res))
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the call did not complete after Deny")
			}
			br.do("waitText", map[string]any{"text": "Nothing is waiting", "timeoutMs": 10000})

			// 6. More samples of how soon a new request shows.
			for range 3 {
				done, start, at = startCall()
				measure(start, at, "times out in")
				br.do("click", map[string]any{"card": outside, "button": "Deny"})
				<-done
				br.do("waitText", map[string]any{"text": "Nothing is waiting", "timeoutMs": 10000})
			}
			worst := time.Duration(0)
			for _, d := range lags {
				worst = max(worst, d)
			}
			round := func(ds []time.Duration) []time.Duration {
				out := make([]time.Duration, len(ds))
				for i, d := range ds {
					out[i] = d.Round(time.Millisecond)
				}
				return out
			}
			t.Logf("a new pending request showed on the open page %v after it was listed on the console (worst %s; the page polls every second), %v after the call was made",
				round(lags), worst.Round(time.Millisecond), round(shown))
			// The page polls every second; the bound guards against a page
			// that polls far less often (one that does not poll never shows
			// the request: waitText gives up), with room for a loaded
			// machine, where the driver's own round trip (node and
			// Chromium) adds to the lag. How soon it shows is logged above.
			if worst > 4*time.Second {
				t.Errorf("a new pending request took %s to show on the page, want about a second", worst)
			}
			if strings.Contains(pageText, cc.tok) {
				t.Error("the console page shows its token")
			}
		})
	}
}

func text2(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return text(res)
}
