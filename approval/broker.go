package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// Options configure a Broker.
type Options struct {
	// Console, when set, lists every pending ask and can answer it; when the
	// client cannot elicit, the ask waits on the console alone.
	Console *Console
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// ProgressEvery is how often a call waiting for a person sends
	// progress (default 10 s).
	ProgressEvery time.Duration
	// Logf writes the server's stderr lines (nil: none).
	Logf func(format string, args ...any)
	// Notifier, when set, shows a desktop notification for every ask that
	// waits for a person.
	Notifier *Notifier
}

// Broker puts asks and ask_user questions to a person. It implements
// toolkit.Approver and toolkit.Asker.
type Broker struct {
	seal    *sealer
	mem     *memory
	console *Console
	now     func() time.Time
	// progressEvery: see Options.ProgressEvery.
	progressEvery time.Duration
	hints         *hinted
	logf          func(format string, args ...any)
	notifier      *Notifier
}

var (
	_ toolkit.Approver = (*Broker)(nil)
	_ toolkit.Asker    = (*Broker)(nil)
)

// Bounds on what the broker keeps in memory.
const (
	maxNonces          = 1 << 16
	maxRememberedPerID = 4096
)

// New returns a broker; its sealing key is made when it first seals or
// opens a state (sealer). It does not fail today: the error stays so that
// a set-up that can fail needs no change of its callers.
func New(opts Options) (*Broker, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	every := opts.ProgressEvery
	if every <= 0 {
		every = 10 * time.Second
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Broker{seal: newSealer(now, maxNonces), mem: newMemory(now, maxRememberedPerID), console: opts.Console, now: now, progressEvery: every,
		hints: &hinted{seen: map[string]bool{}}, logf: logf, notifier: opts.Notifier}, nil
}

// Approve implements toolkit.Approver: remembered approvals first, then one
// form for the call's remaining asks through the client (both eras) and the
// console, whichever answers first.
func (b *Broker) Approve(ctx context.Context, call toolkit.ApprovalCall) (toolkit.ApprovalOutcome, *mcp.CallToolResult) {
	if len(call.Asks) == 0 || call.Policy == nil {
		return toolkit.ApprovalOutcome{Reason: grants.ReasonDeclined}, nil // nothing to approve is not a yes
	}
	asks := b.mem.unremembered(call.Principal, call.Asks)
	if len(asks) == 0 {
		return toolkit.ApprovalOutcome{Approved: true, Reason: grants.ReasonApprovedForSession, Channel: "memory"}, nil
	}
	timeout := call.Policy.Limits.ApprovalTimeout
	cc := contextOf(ctx, call)
	a, pending, reason := b.ask(ctx, askSpec{
		bind: binding{Kind: kindApproval, Tool: call.Tool, Args: argsDigest(call.Args), Principal: call.Principal,
			Asks: asksDigest(call.Asks)},
		form:     approvalForm(call.Tool, cc, asks, timeout),
		timeout:  timeout,
		retry:    call.Request.Params.MultiRoundTripParams,
		progress: progressToken(call.Request),
		every:    call.Policy.Limits.ApprovalProgress,
		fill:     func(t *ticket) { t.Asks, t.Context = asks, cc },
		notify:   func(id string) { b.notifier.notify(call.Tool, cc, asks, id, b.askURL(id)) },
		page:     true,
	})
	if pending != nil {
		return toolkit.ApprovalOutcome{}, pending
	}
	if reason != "" {
		out := toolkit.ApprovalOutcome{Reason: reason, Channel: a.Channel}
		if reason == grants.ReasonApprovalUnavailable && b.console == nil {
			out.Hint = b.hints.once(call.Principal, b.logf)
		}
		return out, nil
	}
	decision, reason := decisionOf(a, sessionOffered(asks))
	approved := reason == grants.ReasonApproved
	if approved && decision == AllowForSession {
		b.mem.remember(call.Principal, asks)
		reason = grants.ReasonApprovedForSession // the person's choice, recorded as such
	}
	return toolkit.ApprovalOutcome{Approved: approved, Reason: reason, Channel: a.Channel}, nil
}

// Remembered implements toolkit.Approver: whether the principal's live
// "allow for session" answers hold exactly this ask.
func (b *Broker) Remembered(principal string, ask grants.Decision) bool {
	return len(b.mem.unremembered(principal, []grants.Decision{ask})) == 0
}

// ReasonError is a question that got no usable answer, with its reason code.
type ReasonError struct {
	Reason grants.Reason
	Msg    string
}

func (e *ReasonError) Error() string { return fmt.Sprintf("%s (reason %s)", e.Msg, e.Reason) }

// AskUser implements toolkit.Asker.
func (b *Broker) AskUser(ctx context.Context, env *toolkit.Env, q toolkit.Question) (toolkit.Answer, *mcp.CallToolResult, error) {
	qq := question{Text: q.Text, Choices: q.Choices, Default: q.Default}
	timeout := env.Policy.Limits.ApprovalTimeout
	a, pending, reason := b.ask(ctx, askSpec{
		bind:    binding{Kind: kindQuestion, Tool: env.Request.Params.Name, Args: argsDigest(rawArguments(env.Request)), Principal: env.Principal},
		form:    questionForm(qq),
		timeout: timeout,
		retry:   env.Request.Params.MultiRoundTripParams,
		fill:    func(t *ticket) { t.Question = &qq },
	})
	if pending != nil {
		return toolkit.Answer{}, pending, nil
	}
	if reason != "" {
		return toolkit.Answer{}, nil, &ReasonError{Reason: reason, Msg: reasonText(reason)}
	}
	action, text, ok := answerOf(qq, a)
	if !ok {
		return toolkit.Answer{}, nil, &ReasonError{Reason: grants.ReasonDeclined, Msg: "the answer did not fit the question's form"}
	}
	return toolkit.Answer{Action: action, Answer: text}, nil, nil
}

func reasonText(r grants.Reason) string {
	switch r {
	case grants.ReasonApprovalUnavailable:
		return "no way to reach a person: the client did not declare elicitation and no approval console is configured or reachable"
	case grants.ReasonApprovalTimeout:
		return "nobody answered in time"
	case grants.ReasonCancelled:
		return "the question was cancelled"
	}
	return "the answer could not be accepted"
}

// askSpec is one question to put to a person.
type askSpec struct {
	bind    binding
	form    mcp.ElicitationParams
	timeout time.Duration
	retry   mcp.MultiRoundTripParams // the client's answer, on a modern retry
	fill    func(*ticket)            // adds what the console shows
	// progress is the request's progress token: while the call waits for a
	// person, progress notifications keep hosts that reset their timeout
	// on progress waiting.
	progress mcp.ProgressToken
	every    time.Duration // how often (default: the broker's)
	// notify tells the person on the desktop (nil: no notification), with
	// the ask's console id ("": not listed on the console).
	notify func(id string)
	// page prefers the console's page (a URL elicitation) over a form when
	// the client declared both: an approval is the person's, not the
	// client's, to give. A question goes to the page only when the client
	// has no form.
	page bool
}

// ask gets an answer for s: from a modern client's retry, by handing a
// modern client an input-required result (pending), or by waiting for a
// legacy client's elicitation and/or the console. reason is set when there
// is no answer to check against the form.
//
// Legacy clients: the broker sends elicitation/create itself, under a
// context bounded by the approval timeout, instead of letting mcp-go's
// bridge do it: the bridge waits on the request's own context, which has no
// deadline, and would turn a timeout into a protocol error with no audit
// line. Either way the waiting call holds its own goroutine (on stdio one per
// call, server/stdiocalls.go), not a lock other calls need.
func (b *Broker) ask(ctx context.Context, s askSpec) (answer, *mcp.CallToolResult, grants.Reason) {
	if s.retry.RequestState != "" || len(s.retry.InputResponses) > 0 {
		return b.resume(ctx, s)
	}
	r := clientReach(ctx)
	if b.console != nil && r.url && (s.page || !r.elicit) {
		if a, res, reason, ok := b.askByPage(ctx, s, r.modern); ok {
			return a, res, reason
		}
		if s.page {
			// The console cannot list the approval (down or full). No form
			// instead: an approval is the person's, and whoever holds the
			// console's address could force the fallback to a form the
			// client answers.
			return answer{}, nil, grants.ReasonApprovalUnavailable
		}
		// A question: the form when the client has one, below.
	}
	switch {
	case r.modern && r.elicit:
		state, nonce := b.seal.seal(s.bind, s.timeout)
		listed := ""
		if b.console != nil {
			t := b.ticket(nonce, s)
			t.retried = true
			if b.console.add(t) == nil { // a full console still leaves the client's form
				listed = nonce
			}
		}
		if s.notify != nil {
			s.notify(listed)
		}
		return answer{}, server.NewInputRequestBuilder(state).Elicit(elicitKey, s.form).ToolResult(), ""
	case r.elicit && !r.modern, b.console != nil:
		return b.wait(ctx, s, r.elicit && !r.modern)
	}
	return answer{}, nil, grants.ReasonApprovalUnavailable
}

func (b *Broker) ticket(id string, s askSpec) *ticket {
	t := newTicket(id, s.bind.Kind, s.bind.Tool, s.bind.Principal, b.now(), s.timeout)
	s.fill(t)
	return t
}

// resume checks a modern client's retry: the sealed state first, then the
// answer, racing a console answer given meanwhile (the first one wins).
func (b *Broker) resume(ctx context.Context, s askSpec) (answer, *mcp.CallToolResult, grants.Reason) {
	o, err := b.seal.open(s.retry.RequestState, s.bind)
	if err != nil {
		return answer{Channel: ChannelElicitation}, nil, stateReason(err)
	}
	if o.page {
		return b.resumeByPage(ctx, s, o.nonce)
	}
	nonce := o.nonce
	a := answer{Channel: ChannelElicitation}
	if res := server.ElicitationResponse(s.retry.InputResponses, elicitKey); res != nil {
		a.Action, a.Content = res.Action, res.Content
	}
	if b.console != nil {
		if t := b.console.claim(nonce); t != nil && !t.resolve(a) {
			a = <-t.done // the console answered first
		}
	}
	return a, nil, ""
}

// wait blocks until the legacy client's elicitation or the console answers,
// the timeout passes, or the client goes away.
func (b *Broker) wait(ctx context.Context, s askSpec, elicit bool) (answer, *mcp.CallToolResult, grants.Reason) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	t := b.ticket("", s)
	t.alone = !elicit
	onConsole := false
	if b.console != nil {
		onConsole = b.console.add(t) == nil
	}
	if s.notify != nil && (onConsole || elicit) {
		listed := ""
		if onConsole {
			listed = t.ID
		}
		s.notify(listed)
	}
	srv := server.ServerFromContext(ctx)
	if elicit && srv != nil {
		go func() {
			res, err := srv.RequestElicitation(ctx, mcp.ElicitationRequest{
				Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
				Params:  s.form,
			})
			switch {
			case err != nil && ctx.Err() != nil:
				// timed out or answered on the console: the wait below decides
			case err != nil:
				if !onConsole { // otherwise the console can still answer
					t.resolve(answer{Channel: ChannelElicitation, Err: err})
				}
			default:
				t.resolve(answer{Channel: ChannelElicitation, Action: res.Action, Content: res.Content})
			}
		}()
	} else if !onConsole {
		t.withdraw("unavailable")
		return answer{}, nil, grants.ReasonApprovalUnavailable
	}
	ch := ChannelElicitation
	if !elicit {
		ch = ChannelConsole
	}
	a, reason := b.await(ctx, t, s, ch)
	return a, nil, reason
}

// await waits for t's answer until ctx ends (the deadline: a timeout; else
// the client went away), sending progress meanwhile. ch is the channel a
// timeout is recorded against.
func (b *Broker) await(ctx context.Context, t *ticket, s askSpec, ch string) (answer, grants.Reason) {
	stop := b.keepAlive(ctx, s.progress, s.every)
	defer stop()
	select {
	case a := <-t.done:
		if a.Err != nil {
			return a, grants.ReasonApprovalUnavailable
		}
		return a, ""
	case <-ctx.Done():
		why, reason := "timed out", grants.ReasonApprovalTimeout
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why, reason = "withdrawn: the client went away", grants.ReasonCancelled
		}
		if !t.withdraw(why) {
			return <-t.done, "" // an answer won the race with the deadline
		}
		return answer{Channel: ch}, reason
	}
}

// keepAlive sends notifications/progress for the waiting call every
// progressEvery, when the request carried a progress token, so a host that
// resets its request timeout on progress keeps waiting for the person
// instead of giving up (Claude Desktop style hosts time out after 60 s).
func (b *Broker) keepAlive(ctx context.Context, token mcp.ProgressToken, every time.Duration) (stop func()) {
	srv := server.ServerFromContext(ctx)
	if token == nil || srv == nil {
		return func() {}
	}
	if every <= 0 {
		every = b.progressEvery
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
					"progressToken": token,
					"progress":      n,
					"message":       "waiting for a person to answer the approval",
				})
			}
		}
	}()
	return func() { cancel(); <-done }
}

// progressToken is the call's progress token, if it asked for progress.
func progressToken(req mcp.CallToolRequest) mcp.ProgressToken {
	if req.Params.Meta == nil {
		return nil
	}
	return req.Params.Meta.ProgressToken
}

// reach is how the current request's client can be asked: elicit is form
// mode, url is URL mode.
type reach struct{ modern, elicit, url bool }

// clientReach reads what the client declared: per request in the modern
// era, per session in the legacy one. A client that did not declare form
// elicitation is never sent one.
func clientReach(ctx context.Context) reach {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		r := reach{modern: true}
		if info.ClientCapabilities != nil {
			r.elicit, r.url = formCapable(info.ClientCapabilities.Elicitation), urlCapable(info.ClientCapabilities.Elicitation)
		}
		return r
	}
	if sess, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		if _, can := sess.(server.SessionWithElicitation); can {
			e := sess.GetClientCapabilities().Elicitation
			return reach{elicit: formCapable(e), url: urlCapable(e)}
		}
	}
	return reach{}
}

// formCapable: an empty elicitation capability means form mode (as before
// modes existed); a URL-only client cannot fill in a form.
func formCapable(c *mcp.ElicitationCapability) bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

// urlCapable: the client declared URL mode (MCP 2025-11-25,
// capabilities.elicitation.url).
func urlCapable(c *mcp.ElicitationCapability) bool {
	return c != nil && c.URL != nil
}

// rawArguments returns a call's arguments as JSON.
func rawArguments(req mcp.CallToolRequest) json.RawMessage {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments
	}
	if req.Params.Arguments == nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(req.Params.Arguments)
	if err != nil {
		return nil
	}
	return b
}
