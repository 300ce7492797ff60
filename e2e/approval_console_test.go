package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// consoleClient drives the approval console as a script would: the token
// from the file in the user's state folder, in an Authorization header.
type consoleClient struct {
	t          *testing.T
	base, tok  string
	csrfHeader string
}

func openConsole(t *testing.T, f *fixture, port int) *consoleClient {
	t.Helper()
	data, err := os.ReadFile(f.consoleToken())
	if err != nil {
		t.Fatal(err)
	}
	cc := &consoleClient{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), tok: strings.TrimSpace(string(data))}
	// The CSRF token is on the page.
	req, _ := http.NewRequest("GET", cc.base+"/", nil)
	req.Header.Set("Authorization", "Bearer "+cc.tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		page.WriteString(string(buf[:n]))
		if err != nil {
			break
		}
	}
	_, rest, ok := strings.Cut(page.String(), `<meta name="csrf" content="`)
	if !ok {
		t.Fatalf("no CSRF token on the page: %d", resp.StatusCode)
	}
	cc.csrfHeader, _, _ = strings.Cut(rest, `"`)
	return cc
}

type consoleState struct {
	Version uint64
	Pending []struct {
		ID, Kind, Tool, Question string
		Items                    []struct{ What, Rule, Risk string }
	}
	Recent []struct{ Outcome, Channel, What string }
}

func (cc *consoleClient) state() consoleState { return cc.stateAt("/api/state") }

// stateAt reads the console's state at path (/api/state?after=V waits for
// a change past version V).
func (cc *consoleClient) stateAt(path string) consoleState {
	req, _ := http.NewRequest("GET", cc.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+cc.tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cc.t.Fatal(err)
	}
	defer resp.Body.Close()
	var s consoleState
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		cc.t.Fatal(err)
	}
	return s
}

// waitPending waits until the console lists n asks, reading the state
// again at each change (?after=V); 20 s is a failure bound.
func (cc *consoleClient) waitPending(n int) consoleState {
	cc.t.Helper()
	s := cc.state()
	for end := time.Now().Add(20 * time.Second); len(s.Pending) < n; {
		if time.Now().After(end) {
			cc.t.Fatalf("fewer than %d pending on the console: %+v", n, s)
		}
		s = cc.stateAt(fmt.Sprintf("/api/state?after=%d", s.Version))
	}
	return s
}

func (cc *consoleClient) decide(form url.Values) int {
	req, _ := http.NewRequest("POST", cc.base+"/api/decide", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+cc.tok)
	req.Header.Set("X-CSRF-Token", cc.csrfHeader)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cc.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestApprovalConsole: a client that cannot elicit is asked through the
// console, in both eras; the console's answer decides, and ask_user works
// there too.
func TestApprovalConsole(t *testing.T) {
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			port := freePort(t)
			f := newFixture(t, sessionConfig+fmt.Sprintf("\n[approval]\nconsole = \"127.0.0.1:%d\"\n", port))
			outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
			c := stdioClient(t, f, era) // no elicitation
			cc := openConsole(t, f, port)

			done := make(chan *mcp.CallToolResult, 1)
			go func() { done <- call(t, c, "read_file", map[string]any{"path": outside}) }()
			s := cc.waitPending(1)
			if p := s.Pending[0]; p.Tool != "read_file" || len(p.Items) != 1 || !strings.Contains(p.Items[0].What, outside) || p.Items[0].Rule != "ask-outside" {
				t.Fatalf("pending: %+v", s.Pending)
			}
			if code := cc.decide(url.Values{"id": {s.Pending[0].ID}, "decision": {"allow_once"}}); code != 200 {
				t.Fatalf("decide: %d", code)
			}
			if res := <-done; res.IsError || text(res) != "O\n" {
				t.Fatalf("approved on the console: %q", text(res))
			}
			if l := lastDecision(t, f, "read_file"); l["reason_code"] != "approved" || l["approval_channel"] != "console" {
				t.Fatalf("audit: %v", l)
			}
			if code := cc.decide(url.Values{"id": {s.Pending[0].ID}, "decision": {"deny"}}); code != 409 {
				t.Fatalf("second answer: %d", code)
			}

			go func() { done <- call(t, c, "read_file", map[string]any{"path": outside}) }()
			s = cc.waitPending(1)
			cc.decide(url.Values{"id": {s.Pending[0].ID}, "decision": {"deny"}})
			if res := <-done; !res.IsError || !strings.Contains(text(res), "declined") {
				t.Fatalf("denied on the console: %q", text(res))
			}

			go func() {
				done <- call(t, c, "ask_user", map[string]any{"question": "Ship it?", "choices": []string{"yes", "no"}})
			}()
			s = cc.waitPending(1)
			if s.Pending[0].Question != "Ship it?" {
				t.Fatalf("question: %+v", s.Pending[0])
			}
			if code := cc.decide(url.Values{"id": {s.Pending[0].ID}, "action": {"accept"}, "answer": {"maybe"}}); code != 400 {
				t.Fatalf("answer outside the choices: %d", code)
			}
			cc.decide(url.Values{"id": {s.Pending[0].ID}, "action": {"accept"}, "answer": {"yes"}})
			res := <-done
			var ans struct{ Action, Answer string }
			structured(t, res, &ans)
			if res.IsError || ans.Action != "accept" || ans.Answer != "yes" {
				t.Fatalf("ask_user on the console: %q", text(res))
			}
			if strings.Contains(text(res), cc.tok) {
				t.Fatal("the console token reached a tool result")
			}
		})
	}
}

// TestApprovalConsoleRace: a legacy client whose person never answers and
// the console: the console answers first, the call runs, and the
// elicitation is withdrawn.
func TestApprovalConsoleRace(t *testing.T) {
	port := freePort(t)
	f := newFixture(t, sessionConfig+fmt.Sprintf("\n[approval]\nconsole = \"127.0.0.1:%d\"\n", port))
	outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
	// The person sees the elicitation, the console answers, and only then
	// does the elicitation's answer arrive: each step waits for the one
	// before, so the order holds however slow the machine is.
	asked := make(chan struct{})
	consoleAnswered := make(chan struct{})
	withdrawn := make(chan struct{}, 1)
	e := &elicitor{}
	e.answer = func(int, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		close(asked)
		<-consoleAnswered
		withdrawn <- struct{}{}
		return decide("deny")(0, mcp.ElicitationRequest{})
	}
	c := stdioClient(t, f, Legacy, client.WithElicitationHandler(e))
	cc := openConsole(t, f, port)
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- call(t, c, "read_file", map[string]any{"path": outside}) }()
	s := cc.waitPending(1)
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the elicitation never reached the client")
	}
	code := cc.decide(url.Values{"id": {s.Pending[0].ID}, "decision": {"allow_once"}})
	close(consoleAnswered)
	if code != 200 {
		t.Fatalf("decide: %d", code)
	}
	if res := <-done; res.IsError || text(res) != "O\n" {
		t.Fatalf("console first: %q", text(res))
	}
	if e.count() != 1 {
		t.Fatalf("elicitation sent %d times", e.count())
	}
	if l := lastDecision(t, f, "read_file"); l["reason_code"] != "approved" || l["approval_channel"] != "console" {
		t.Fatalf("audit: %v", l)
	}
	<-withdrawn // the late elicitation answer lands on a withdrawn request
	f.write(t, "in.txt", "in\n")
	if res := call(t, c, "read_file", map[string]any{"path": "in.txt"}); res.IsError {
		t.Fatalf("after the race: %q", text(res))
	}
	if n := len(decisionLines(t, f, "read_file")); n != 2 {
		t.Fatalf("%d decision lines, want 2 (the late answer decided nothing)", n)
	}
}
