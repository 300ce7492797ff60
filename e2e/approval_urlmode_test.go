package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// urlElicitor is a client that declared URL-mode elicitation: it hands
// each URL elicitation to the test (the person) and accepts it, which only
// means "the person opened the link". Its content claims an approval,
// which must count for nothing.
type urlElicitor struct {
	asks    chan mcp.ElicitationParams
	decline atomic.Bool // the person refuses to open the link
}

func (e *urlElicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.asks <- req.Params
	if e.decline.Load() {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"decision": "allow_once"}}}, nil
}

var urlAndForm = client.WithClientCapabilities(mcp.ClientCapabilities{
	Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}})

// consolePerson is the person at the console in a browser: a cookie jar
// and the login's secret path, as the console's own page knows it.
type consolePerson struct {
	t     *testing.T
	http  *http.Client
	base  string
	login string // "/s/SID/"
}

// logIn opens the console link the server printed (token from the file),
// as a browser does: the token is swapped for a cookie and a login path.
func logIn(t *testing.T, f *fixture, port int) *consolePerson {
	t.Helper()
	tok, err := os.ReadFile(f.consoleToken())
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	p := &consolePerson{t: t, http: &http.Client{Jar: jar, Timeout: 10 * time.Second}, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	resp, err := p.http.Get(p.base + "/?token=" + strings.TrimSpace(string(tok)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Request.URL.Path, "/s/") {
		t.Fatalf("login: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	p.login = resp.Request.URL.Path
	return p
}

func (p *consolePerson) get(u string) (int, string) {
	p.t.Helper()
	resp, err := p.http.Get(u)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// open opens link as the person's browser does (the link's page, whose
// script moves to the login's page of the ask) and returns that page's
// address and CSRF token.
func (p *consolePerson) open(link string) (page, csrf string) {
	p.t.Helper()
	code, body := p.get(link)
	if code != 200 || !strings.Contains(body, "log into the approval console") || strings.Contains(body, `name="csrf"`) {
		p.t.Fatalf("the link's page: %d %q", code, body)
	}
	id := link[strings.LastIndex(link, "/")+1:]
	page = p.base + p.login + "ask/" + id // where the link's script goes
	code, body = p.get(page)
	if code != 200 {
		p.t.Fatalf("the ask's page %s: %d %q", page, code, body)
	}
	_, rest, ok := strings.Cut(body, `name="csrf" value="`)
	if !ok {
		p.t.Fatalf("no CSRF token on the ask's page: %q", body)
	}
	csrf, _, _ = strings.Cut(rest, `"`)
	return page, csrf
}

// press posts decision from the ask's page.
func (p *consolePerson) press(page, csrf, decision string) (int, string) {
	p.t.Helper()
	req, _ := http.NewRequest("POST", page, strings.NewReader(url.Values{"csrf": {csrf}, "decision": {decision}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", p.base)
	resp, err := p.http.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestApprovalURLMode: an mcp-go client declaring URL-mode (and form)
// elicitation, with a console: the ask comes as a link to the console page
// of that ask, holding no secret; the person answers there and the call
// completes (allow) or is refused (deny), whatever the client answered.
func TestApprovalURLMode(t *testing.T) {
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			port := freePort(t)
			f := newFixture(t, sessionConfig+fmt.Sprintf("\n[approval]\nconsole = \"127.0.0.1:%d\"\n", port))
			outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
			e := &urlElicitor{asks: make(chan mcp.ElicitationParams, 4)}
			c := stdioClient(t, f, era, client.WithElicitationHandler(e), urlAndForm)
			completed := make(chan string, 16) // the ids of notifications/elicitation/complete
			c.OnNotification(func(n mcp.JSONRPCNotification) {
				if n.Method == string(mcp.MethodNotificationElicitationComplete) {
					select {
					case completed <- fmt.Sprint(n.Params.AdditionalFields["elicitationId"]):
					default:
					}
				}
			})
			tok, _ := os.ReadFile(f.consoleToken())
			person := logIn(t, f, port)
			person.t = t

			for _, tc := range []struct {
				decision string
				runs     bool
				reason   string
			}{{"allow_once", true, "approved"}, {"deny", false, "declined"}} {
				t.Run(tc.decision, func(t *testing.T) {
					person.t = t
					done := make(chan *mcp.CallToolResult, 1)
					go func() { done <- call(t, c, "read_file", map[string]any{"path": outside}) }()
					var ask mcp.ElicitationParams
					select {
					case ask = <-e.asks:
					case <-time.After(20 * time.Second):
						t.Fatal("no URL elicitation")
					}
					if ask.Mode != mcp.ElicitationModeURL || !strings.HasPrefix(ask.URL, person.base+"/ask/") ||
						ask.ElicitationID == "" || !strings.HasSuffix(ask.URL, "/"+ask.ElicitationID) {
						t.Fatalf("URL elicitation %+v", ask)
					}
					if ask.RequestedSchema != nil || !strings.Contains(ask.Message, outside) {
						t.Fatalf("URL elicitation with a form, or not saying what it asks: %+v", ask)
					}
					// No secret in the link: not the token, not the login path.
					for _, secret := range []string{strings.TrimSpace(string(tok)), person.login, "token"} {
						if strings.Contains(ask.URL, secret) {
							t.Fatalf("the link %q holds %q", ask.URL, secret)
						}
					}
					// The link alone answers nothing.
					if code, body := (&consolePerson{t: t, http: &http.Client{}}).get(ask.URL); code != 200 || strings.Contains(body, outside) {
						t.Fatalf("the link without a login: %d %q", code, body)
					}
					select {
					case res := <-done:
						t.Fatalf("the call ended before the person answered: %q", text(res))
					case <-time.After(200 * time.Millisecond):
					}
					page, csrf := person.open(ask.URL)
					if code, body := person.press(page, csrf, tc.decision); code != 200 || !strings.Contains(body, "recorded") {
						t.Fatalf("answer on the page: %d %q", code, body)
					}
					var res *mcp.CallToolResult
					select {
					case res = <-done:
					case <-time.After(20 * time.Second):
						t.Fatal("the call did not complete after the page's answer")
					}
					ran := !res.IsError && text(res) == "O\n"
					if ran != tc.runs || !tc.runs && !strings.Contains(text(res), tc.reason) {
						t.Fatalf("ran=%v (%q), want %v / %s", ran, text(res), tc.runs, tc.reason)
					}
					d := lastDecision(t, f, "read_file")
					if d["reason_code"] != tc.reason || d["approval_channel"] != "console" {
						t.Fatalf("audit: %v", d)
					}
					// A second answer on the page is refused.
					if code, _ := person.press(page, csrf, "allow_once"); code != http.StatusConflict {
						t.Fatal("a second answer was taken")
					}
					if era == Legacy {
						awaitCompleted(t, completed, ask.ElicitationID)
					}
				})
			}
			// Declining the link in the client is a refusal, and the ask
			// leaves the console.
			t.Run("client declines", func(t *testing.T) {
				e.decline.Store(true)
				defer e.decline.Store(false)
				res := call(t, c, "read_file", map[string]any{"path": outside})
				<-e.asks
				if !res.IsError || !strings.Contains(text(res), "declined") {
					t.Fatalf("declined link: %q", text(res))
				}
				if d := lastDecision(t, f, "read_file"); d["reason_code"] != "declined" || d["approval_channel"] != "elicitation" {
					t.Fatalf("audit: %v", d)
				}
				if code, body := person.get(person.base + person.login + "api/state"); code != 200 || !strings.Contains(body, `"pending":[]`) {
					t.Fatalf("console after the decline: %d %s", code, body)
				}
			})
		})
	}
}

// awaitCompleted waits for notifications/elicitation/complete naming id
// (others, of earlier asks, are skipped); 10 s is a failure bound.
func awaitCompleted(t *testing.T, completed <-chan string, id string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-completed:
			if got == id {
				return
			}
		case <-timeout:
			t.Fatalf("no notifications/elicitation/complete for %s", id)
		}
	}
}

// waitFor polls cond for up to 10 s: only for what another process writes
// to a file, which nothing else signals.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s", what)
}

// TestApprovalURLModeBrowser: the same in headless Chromium, with the
// pages' own scripts: a link opened before logging in comes back after
// the console login; once logged in, a link goes straight to its ask.
func TestApprovalURLModeBrowser(t *testing.T) {
	dir := browserDir(t)
	port := freePort(t)
	f := newFixture(t, sessionConfig+fmt.Sprintf("\n[approval]\nconsole = \"127.0.0.1:%d\"\n", port))
	outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
	e := &urlElicitor{asks: make(chan mcp.ElicitationParams, 4)}
	c := stdioClient(t, f, Legacy, client.WithElicitationHandler(e), urlAndForm)
	tok, err := os.ReadFile(f.consoleToken())
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	home := filepath.Join(f.Root, "browser-home")
	os.MkdirAll(home, 0o700)
	br := startBrowser(t, dir, home)

	ask := func() (chan *mcp.CallToolResult, string) {
		done := make(chan *mcp.CallToolResult, 1)
		go func() { done <- call(t, c, "read_file", map[string]any{"path": outside}) }()
		select {
		case a := <-e.asks:
			return done, a.URL
		case <-time.After(20 * time.Second):
			t.Fatal("no URL elicitation")
		}
		return nil, ""
	}
	finish := func(done chan *mcp.CallToolResult) *mcp.CallToolResult {
		select {
		case res := <-done:
			return res
		case <-time.After(20 * time.Second):
			t.Fatal("the call did not complete")
		}
		return nil
	}

	// 1. The link before logging in: it says how, and shows nothing of the ask.
	done, link := ask()
	first := asLoad(t, br.do("open", map[string]any{"url": link}))
	if first.Status != 200 || !strings.Contains(first.Text, "log into the approval console") || strings.Contains(first.Text, outside) {
		t.Fatalf("the link before login: %d %q", first.Status, first.Text)
	}
	// 2. The console login brings the person back to that ask; allow.
	br.do("open", map[string]any{"url": base + "/?token=" + url.QueryEscape(strings.TrimSpace(string(tok)))})
	pageShows(t, br, "asks for your answer")
	text1 := br.do("text", nil)["text"].(string)
	if !strings.Contains(text1, outside) || !strings.Contains(text1, "from onellm-e2e") {
		t.Fatalf("the ask's page: %q", text1)
	}
	br.do("click", map[string]any{"card": outside, "button": "Allow once"})
	pageShows(t, br, "Your answer is recorded")
	if res := finish(done); res.IsError || text(res) != "O\n" {
		t.Fatalf("allowed call: %q", text(res))
	}
	// 3. Logged in, a link goes straight to its ask; deny.
	done, link = ask()
	br.do("open", map[string]any{"url": link})
	pageShows(t, br, "asks for your answer")
	br.do("click", map[string]any{"card": outside, "button": "Deny"})
	pageShows(t, br, "Your answer is recorded")
	if res := finish(done); !res.IsError || !strings.Contains(text(res), "declined") {
		t.Fatalf("denied call: %q", text(res))
	}
}

// pageShows waits until the browser's page shows want (the page may still
// be moving on by its own script).
func pageShows(t *testing.T, br *browser, want string) {
	t.Helper()
	var last string
	for range 200 {
		if m := br.do("text", nil); m["text"] != nil {
			if last, _ = m["text"].(string); strings.Contains(last, want) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the page does not show %q: %q", want, last)
}
