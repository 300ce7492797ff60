package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// elicitor is a scripted person: it answers every elicitation with answer
// and counts what it was asked.
type elicitor struct {
	answer func(n int, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

	mu       sync.Mutex
	messages []string
	schemas  []any
	calls    atomic.Int32
}

func (e *elicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	n := int(e.calls.Add(1))
	e.mu.Lock()
	e.messages = append(e.messages, req.Params.Message)
	e.schemas = append(e.schemas, req.Params.RequestedSchema)
	e.mu.Unlock()
	return e.answer(n, req)
}

func (e *elicitor) count() int { return int(e.calls.Load()) }

func (e *elicitor) lastMessage() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.messages) == 0 {
		return ""
	}
	return e.messages[len(e.messages)-1]
}

func reply(action mcp.ElicitationResponseAction, content any) func(int, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return func(int, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action, Content: content}}, nil
	}
}

func decide(d string) func(int, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return reply(mcp.ElicitationResponseActionAccept, map[string]any{"decision": d})
}

// decisionLines returns the audit's decision lines for tool.
func decisionLines(t *testing.T, f *fixture, tool string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range f.auditLines(t) {
		if l["event"] == "decision" && l["tool"] == tool {
			out = append(out, l)
		}
	}
	return out
}

func lastDecision(t *testing.T, f *fixture, tool string) map[string]any {
	t.Helper()
	ls := decisionLines(t, f, tool)
	if len(ls) == 0 {
		t.Fatalf("no audit decision line for %s", tool)
	}
	return ls[len(ls)-1]
}

const sessionConfig = `mode = "interactive"

[[rules.allow]]
rule_id    = "read-workspace"
capability = "workspace.files.read"

[[rules.allow]]
rule_id    = "ask-user"
capability = "user.ask"

[[rules.ask]]
rule_id     = "ask-outside"
capability  = "filesystem.read"
constraints = { approval_expires_seconds = 600 }
`

func TestApprovalElicitation(t *testing.T) {
	cases := []struct {
		name    string
		answer  func(int, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
		runs    bool
		reason  string
		channel string
	}{
		{"allow once", decide("allow_once"), true, "approved", "elicitation"},
		{"deny", decide("deny"), false, "declined", "elicitation"},
		{"decline", reply(mcp.ElicitationResponseActionDecline, nil), false, "declined", "elicitation"},
		{"cancel", reply(mcp.ElicitationResponseActionCancel, nil), false, "cancelled", "elicitation"},
		{"decision outside the form", decide("yes"), false, "declined", "elicitation"},
		{"missing decision", reply(mcp.ElicitationResponseActionAccept, map[string]any{}), false, "declined", "elicitation"},
		{"extra field", reply(mcp.ElicitationResponseActionAccept, map[string]any{"decision": "allow_once", "also": "x"}), false, "declined", "elicitation"},
		{"content not an object", reply(mcp.ElicitationResponseActionAccept, "allow_once"), false, "declined", "elicitation"},
	}
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			f := newFixture(t, `profile = "interactive-dev"`)
			outside := f.write(t, filepath.Join(f.Root, "outside.txt"), "outside secret\n")
			e := &elicitor{}
			c := stdioClient(t, f, era, client.WithElicitationHandler(e))
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					e.answer = tc.answer
					before := e.count()
					res := call(t, c, "read_file", map[string]any{"path": outside})
					if e.count() != before+1 {
						t.Fatalf("asked %d times, want once", e.count()-before)
					}
					msg := e.lastMessage()
					for _, want := range []string{"read_file", outside, "interactive-dev/ask-outside-workspace", "risk high"} {
						if !strings.Contains(msg, want) {
							t.Errorf("form message %q lacks %q", msg, want)
						}
					}
					ran := !res.IsError && text(res) == "outside secret\n"
					if ran != tc.runs {
						t.Fatalf("ran=%v, want %v: %q", ran, tc.runs, text(res))
					}
					if !tc.runs && (!strings.Contains(text(res), tc.reason) || strings.Contains(text(res), "outside secret")) {
						t.Fatalf("refusal %q does not name %s (or leaks the file)", text(res), tc.reason)
					}
					l := lastDecision(t, f, "read_file")
					if l["reason_code"] != tc.reason || l["approval_channel"] != tc.channel || l["rule_id"] != "interactive-dev/ask-outside-workspace" {
						t.Fatalf("audit line %v, want reason %s channel %s", l, tc.reason, tc.channel)
					}
				})
			}
			// allow_once holds once: the same call asks again.
			e.answer = decide("allow_once")
			before := e.count()
			call(t, c, "read_file", map[string]any{"path": outside})
			call(t, c, "read_file", map[string]any{"path": outside})
			if e.count() != before+2 {
				t.Fatalf("allow_once was remembered: asked %d times for two calls", e.count()-before)
			}
			// allow_for_session under a rule without approval_expires_seconds
			// is not offered; choosing it anyway is an answer outside the
			// form (declined), and nothing is remembered.
			e.answer = decide("allow_for_session")
			if res := call(t, c, "read_file", map[string]any{"path": outside}); !res.IsError || !strings.Contains(text(res), "declined") {
				t.Fatalf("allow_for_session outside the form: %s", text(res))
			}
			call(t, c, "read_file", map[string]any{"path": outside})
			if e.count() != before+4 {
				t.Fatalf("allow_for_session without approval_expires_seconds was remembered")
			}
			// A read inside the workspace is allowed without asking.
			f.write(t, "in.txt", "in\n")
			if res := call(t, c, "read_file", map[string]any{"path": "in.txt"}); res.IsError || e.count() != before+4 {
				t.Fatalf("workspace read: %q, asked %d", text(res), e.count()-before-4)
			}
		})
	}
}

func TestApprovalForSession(t *testing.T) {
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			f := newFixture(t, sessionConfig)
			a := f.write(t, filepath.Join(f.Root, "a.txt"), "A\n")
			b := f.write(t, filepath.Join(f.Root, "b.txt"), "B\n")
			e := &elicitor{answer: decide("allow_for_session")}
			c := stdioClient(t, f, era, client.WithElicitationHandler(e))

			if res := call(t, c, "read_file", map[string]any{"path": a}); res.IsError || text(res) != "A\n" {
				t.Fatalf("first read: %q", text(res))
			}
			// The person's answer is recorded as what they chose; later
			// calls say they came from memory.
			if l := lastDecision(t, f, "read_file"); l["reason_code"] != "approved_for_session" || l["rule_id"] != "ask-outside" || l["approval_channel"] != "elicitation" {
				t.Fatalf("audit: %v", l)
			}
			e.answer = decide("deny") // a second ask would now refuse
			if res := call(t, c, "read_file", map[string]any{"path": a}); res.IsError || text(res) != "A\n" || e.count() != 1 {
				t.Fatalf("remembered read: %q, asked %d times", text(res), e.count())
			}
			if l := lastDecision(t, f, "read_file"); l["reason_code"] != "approved_for_session" || l["approval_channel"] != "memory" {
				t.Fatalf("audit: %v", l)
			}
			// A different request (another path, or a window of the same file
			// is the same request) asks again.
			if res := call(t, c, "read_file", map[string]any{"path": a, "limit": 1}); res.IsError || e.count() != 1 {
				t.Fatalf("same path, other window: %q, asked %d", text(res), e.count())
			}
			if res := call(t, c, "read_file", map[string]any{"path": b}); !res.IsError || e.count() != 2 || !strings.Contains(text(res), "declined") {
				t.Fatalf("other path: %q, asked %d times", text(res), e.count())
			}
			// allow_once is not remembered, even under a rule that would let
			// allow_for_session hold.
			e.answer = decide("allow_once")
			call(t, c, "read_file", map[string]any{"path": b})
			if res := call(t, c, "read_file", map[string]any{"path": b}); res.IsError || e.count() != 4 {
				t.Fatalf("allow_once twice: %q, asked %d times, want 4", text(res), e.count())
			}
		})
	}
}

func TestApprovalWithoutElicitation(t *testing.T) {
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			f := newFixture(t, sessionConfig)
			outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
			c := stdioClient(t, f, era) // declares no elicitation
			res := call(t, c, "read_file", map[string]any{"path": outside})
			if !res.IsError || !strings.Contains(text(res), "approval_unavailable") {
				t.Fatalf("read: %q", text(res))
			}
			res = call(t, c, "ask_user", map[string]any{"question": "Which?"})
			if !res.IsError || !strings.Contains(text(res), "approval_unavailable") {
				t.Fatalf("ask_user: %q", text(res))
			}
		})
	}
}

func TestApprovalTimeout(t *testing.T) {
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			f := newFixture(t, sessionConfig+"\n[approval]\ntimeout_seconds = 1\n")
			outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
			// The person answers only once the call came back refused: a
			// server that waited for the answer instead of its timeout
			// would never answer the call (call gives up after 30 s).
			late, answered := lateAnswer(era)
			c := stdioClient(t, f, era, client.WithElicitationHandler(&elicitor{answer: late}))
			start := time.Now()
			res := call(t, c, "read_file", map[string]any{"path": outside})
			t.Logf("%s: refused after %s", era, time.Since(start).Round(time.Millisecond))
			if !res.IsError || !strings.Contains(text(res), "approval_timeout") {
				t.Fatalf("late answer: %q", text(res))
			}
			if l := lastDecision(t, f, "read_file"); l["reason_code"] != "approval_timeout" {
				t.Fatalf("audit: %v", l)
			}
			answered() // the late answer is sent; the server must stay healthy
			f.write(t, "in.txt", "in\n")
			if res := call(t, c, "read_file", map[string]any{"path": "in.txt"}); res.IsError {
				t.Fatalf("after the late answer: %q", text(res))
			}
		})
	}
}

// lateAnswer is an elicitation answer (allow_once) that a person gives too
// late. In the legacy era it is held back until answered is called (once
// the call came back refused), so a server that waited for the answer
// instead of its timeout would never answer the call. A modern-era client
// sends its answer with the retried call, which comes back only then: the
// answer is given 2.5 s in, past the 1 s timeout, and must still be
// refused. answered lets it go and returns once it was sent (bounded).
func lateAnswer(era Era) (answer func(int, mcp.ElicitationRequest) (*mcp.ElicitationResult, error), answered func()) {
	hold := 20 * time.Second
	if era == Modern {
		hold = 2500 * time.Millisecond
	}
	release, sent := make(chan struct{}), make(chan struct{}, 1)
	answer = func(int, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		defer func() { sent <- struct{}{} }()
		select {
		case <-release:
		case <-time.After(hold):
		}
		return decide("allow_once")(0, mcp.ElicitationRequest{})
	}
	answered = func() {
		close(release)
		select {
		case <-sent:
		case <-time.After(20 * time.Second):
		}
	}
	return answer, answered
}

func TestAskUser(t *testing.T) {
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			f := newFixture(t, `profile = "interactive-dev"`)
			var schema map[string]any
			var mu sync.Mutex
			e := &elicitor{}
			c := stdioClient(t, f, era, client.WithElicitationHandler(e))
			if _, ok := toolNames(t, c)["ask_user"]; !ok {
				t.Fatal("ask_user not listed")
			}

			e.answer = func(_ int, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				b, _ := json.Marshal(req.Params.RequestedSchema)
				mu.Lock()
				json.Unmarshal(b, &schema)
				mu.Unlock()
				return reply(mcp.ElicitationResponseActionAccept, map[string]any{"answer": "blue"})(0, req)
			}
			res := call(t, c, "ask_user", map[string]any{"question": "Which colour?", "choices": []string{"red", "blue"}, "default": "red"})
			var out struct{ Action, Answer string }
			structured(t, res, &out)
			if res.IsError || out.Action != "accept" || out.Answer != "blue" || e.lastMessage() != "Which colour?" {
				t.Fatalf("choice: %q %+v", text(res), out)
			}
			field := schema["properties"].(map[string]any)["answer"].(map[string]any)
			if enum, _ := json.Marshal(field["enum"]); string(enum) != `["red","blue"]` || field["default"] != "red" {
				t.Fatalf("schema: %v", schema)
			}

			e.answer = reply(mcp.ElicitationResponseActionAccept, map[string]any{"answer": "green"})
			res = call(t, c, "ask_user", map[string]any{"question": "Which colour?", "choices": []string{"red", "blue"}})
			if !res.IsError || !strings.Contains(text(res), "declined") {
				t.Fatalf("answer outside the choices: %q", text(res))
			}

			e.answer = reply(mcp.ElicitationResponseActionAccept, map[string]any{"answer": "free text"})
			res = call(t, c, "ask_user", map[string]any{"question": "Anything?"})
			structured(t, res, &out)
			if res.IsError || out.Answer != "free text" {
				t.Fatalf("free text: %q", text(res))
			}

			for _, act := range []mcp.ElicitationResponseAction{mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel} {
				e.answer = reply(act, nil)
				res = call(t, c, "ask_user", map[string]any{"question": "Anything?"})
				structured(t, res, &out)
				if res.IsError || out.Action != string(act) || out.Answer != "" {
					t.Fatalf("%s: %q", act, text(res))
				}
			}
			res = call(t, c, "ask_user", map[string]any{"question": "x", "choices": []string{"a"}, "default": "b"})
			if !res.IsError || !strings.Contains(text(res), "invalid_arguments") {
				t.Fatalf("bad default: %q", text(res))
			}
		})
	}
}

// TestPendingApprovalsDoNotStarve: a hundred calls waiting for a person
// (more than mcp-go's stdio worker pool can hold) while read_file calls
// from the same client keep answering.
func TestPendingApprovalsDoNotStarve(t *testing.T) {
	const pending = 100
	c, release := holdPending(t, pending)
	for i := range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		req := mcp.CallToolRequest{}
		req.Params.Name = "read_file"
		req.Params.Arguments = map[string]any{"path": "in.txt"}
		start := time.Now()
		res, err := c.CallTool(ctx, req)
		cancel()
		if err != nil || res.IsError {
			t.Fatalf("read %d while %d approvals pend: %v %v", i, pending, err, res)
		}
		t.Logf("read_file with %d pending approvals: %s", pending, time.Since(start))
	}
	for res := range release() {
		if res.IsError || text(res) != "O\n" {
			t.Fatalf("approved call: %q", text(res))
		}
	}
}

// BenchmarkReadFileWithPendingApprovals is read_file over stdio while 100
// calls of the same client wait for a person (issue 15's target: under
// 5 ms).
func BenchmarkReadFileWithPendingApprovals(b *testing.B) {
	c, release := holdPending(b, 100)
	defer release()
	for b.Loop() {
		if res := call(b, c, "read_file", map[string]any{"path": "in.txt"}); res.IsError {
			b.Fatal(text(res))
		}
	}
}

// holdPending starts a stdio server and n read_file calls outside the
// workspace whose approvals the client holds unanswered; it returns once
// all n asks have reached the client. release answers them (allow once)
// and returns the n results.
func holdPending(tb testing.TB, n int) (*client.Client, func() <-chan *mcp.CallToolResult) {
	tb.Helper()
	f := newFixture(tb, sessionConfig)
	outside := f.write(tb, filepath.Join(f.Root, "o.txt"), "O\n")
	f.write(tb, "in.txt", "in\n")
	hold, arrived := make(chan struct{}), make(chan struct{}, n)
	e := &elicitor{answer: func(int, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		arrived <- struct{}{}
		<-hold
		return decide("allow_once")(0, mcp.ElicitationRequest{})
	}}
	c := stdioClient(tb, f, Legacy, client.WithElicitationHandler(e))
	var wg sync.WaitGroup
	results := make(chan *mcp.CallToolResult, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- call(tb, c, "read_file", map[string]any{"path": outside})
		}()
	}
	var once sync.Once
	release := func() <-chan *mcp.CallToolResult {
		once.Do(func() {
			close(hold)
			wg.Wait()
			close(results)
		})
		return results
	}
	tb.Cleanup(func() { release() })
	timeout := time.After(10 * time.Second) // a failure bound
	for i := range n {
		select {
		case <-arrived:
		case <-timeout:
			tb.Fatalf("%d of %d asks reached the client", i, n)
		}
	}
	return c, release
}

// rawModernCall sends one tools/call of the 2026-07-28 era by hand, so a
// test controls requestState and inputResponses.
func rawModernCall(t *testing.T, c *client.Client, id int, args map[string]any, state string, responses map[string]any) *mcp.CallToolResult {
	t.Helper()
	params := map[string]any{
		"name": "read_file", "arguments": args,
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    string(Modern),
			mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}},
			mcp.MetaKeyClientInfo:         map[string]any{"name": "raw", "version": "1"},
		},
	}
	if state != "" {
		params["requestState"] = state
	}
	if responses != nil {
		params["inputResponses"] = responses
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(100000 + id)), Method: "tools/call", Params: params})
	if err != nil || resp.Error != nil {
		t.Fatalf("raw call: %v %v", err, resp)
	}
	res, err := mcp.ParseCallToolResult(&resp.Result)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestApprovalRequestStateAttacks(t *testing.T) {
	f := newFixture(t, sessionConfig)
	a := f.write(t, filepath.Join(f.Root, "a.txt"), "A\n")
	b := f.write(t, filepath.Join(f.Root, "b.txt"), "B\n")
	c := stdioClient(t, f, Modern)
	allow := map[string]any{"onellm_approval": map[string]any{"action": "accept", "content": map[string]any{"decision": "allow_once"}}}

	first := rawModernCall(t, c, 1, map[string]any{"path": a}, "", nil)
	if first.ResultType != mcp.ResultTypeInputRequired || first.RequestState == "" {
		t.Fatalf("first round: %+v", first)
	}
	state := first.RequestState
	checks := []struct {
		name, state string
		args        map[string]any
		responses   map[string]any
		want        string
	}{
		{"forged MAC", state[:len(state)-2] + "AA", map[string]any{"path": a}, allow, "declined"},
		{"made up", "eyJ2IjoxfQ.AAAA", map[string]any{"path": a}, allow, "declined"},
		{"no state", "", map[string]any{"path": a}, allow, "declined"},
		{"other arguments", state, map[string]any{"path": b}, allow, "declined"},
		{"missing answer", state, map[string]any{"path": a}, map[string]any{}, "declined"},
	}
	for i, ck := range checks {
		res := rawModernCall(t, c, 10+i, ck.args, ck.state, ck.responses)
		if !res.IsError || !strings.Contains(text(res), ck.want) || strings.Contains(text(res), "A\n") {
			t.Errorf("%s: %q", ck.name, text(res))
		}
	}
	// "missing answer" spent the nonce; a fresh state is answered properly once.
	fresh := rawModernCall(t, c, 20, map[string]any{"path": a}, "", nil).RequestState
	if res := rawModernCall(t, c, 21, map[string]any{"path": a}, fresh, allow); res.IsError || text(res) != "A\n" {
		t.Fatalf("good retry: %q", text(res))
	}
	if res := rawModernCall(t, c, 22, map[string]any{"path": a}, fresh, allow); !res.IsError || !strings.Contains(text(res), "declined") {
		t.Fatalf("replayed state: %q", text(res))
	}
	os.Remove(b)
}

// BenchmarkApprovedForSessionRoundTrip compares a read approved for the
// session (asked once, then remembered) with a plainly allowed read of the
// same size, over stdio with the built binary.
func BenchmarkApprovedForSessionRoundTrip(b *testing.B) {
	for _, kind := range []string{"allowed", "approved_for_session"} {
		b.Run(kind, func(b *testing.B) {
			f := newFixture(b, sessionConfig)
			body := strings.Repeat(strings.Repeat("x", 63)+"\n", 64)
			path := f.write(b, "four.txt", body)
			if kind != "allowed" {
				path = f.write(b, filepath.Join(f.Root, "four.txt"), body)
			}
			e := &elicitor{answer: decide("allow_for_session")}
			c := stdioClient(b, f, Modern, client.WithElicitationHandler(e))
			args := map[string]any{"path": path}
			call(b, c, "read_file", args)
			for b.Loop() {
				if res := call(b, c, "read_file", args); res.IsError {
					b.Fatal(text(res))
				}
			}
			if kind != "allowed" && e.count() != 1 {
				b.Fatalf("asked %d times", e.count())
			}
		})
	}
}

// TestApprovalForSessionIsExactForCommands: "allow for session" of
// `touch 'm1 m2'` holds for exactly those words in that folder: `touch m1
// m2` (two words) and the same words in another folder ask again.
func TestApprovalForSessionIsExactForCommands(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"

[[rules.ask]]
rule_id     = "ask-touch"
capability  = "process.exec"
target      = { resource = "touch" }
constraints = { approval_expires_seconds = 600 }
`)
	if err := os.MkdirAll(filepath.Join(f.Workspace, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := &elicitor{answer: decide("allow_for_session")}
	c := stdioClient(t, f, Legacy, client.WithElicitationHandler(e))
	run := func(command, cwd string) *mcp.CallToolResult {
		args := map[string]any{"command": command}
		if cwd != "" {
			args["cwd"] = cwd
		}
		return call(t, c, "execute_terminal_command", args)
	}
	if res := run("touch 'm1 m2'", ""); res.IsError || e.count() != 1 {
		t.Fatalf("first: %s (asked %d)", text(res), e.count())
	}
	if msg := e.lastMessage(); !strings.Contains(msg, "`touch 'm1 m2'`") {
		t.Fatalf("the prompt does not tell the words apart:\n%s", msg)
	}
	e.answer = decide("deny")
	if res := run("touch 'm1 m2'", ""); res.IsError || e.count() != 1 {
		t.Fatalf("remembered: %s (asked %d)", text(res), e.count())
	}
	if res := run("touch m1 m2", ""); !res.IsError || e.count() != 2 {
		t.Fatalf("two words were approved by one: %s (asked %d)", text(res), e.count())
	}
	if res := run("touch 'm1 m2'", "sub"); !res.IsError || e.count() != 3 {
		t.Fatalf("another folder was approved: %s (asked %d)", text(res), e.count())
	}
	if _, err := os.Stat(filepath.Join(f.Workspace, "m1")); err == nil {
		t.Fatal("a declined command ran")
	}
}
