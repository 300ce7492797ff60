package approval

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/grants"
)

// URL-mode elicitation (MCP 2025-11-25): for a client that declared
// capabilities.elicitation.url, an ask is not a form the client fills in
// but a link to the console page for that one ask (Console.AskURL). The
// person answers there, in the browser where they logged into the console;
// the client only learns that the person agreed to open the link, so a
// client (or the model behind it) cannot answer an approval for the person.
//
//   - Older protocol: elicitation/create with mode "url"; the client's
//     "accept" only means the person opened the link, "decline" or
//     "cancel" decide (declined, cancelled). When the page answers, the
//     server sends notifications/elicitation/complete and the tool call
//     returns with the decision.
//   - Protocol 2026-07-28: an input-required result with the URL
//     elicitation and a sealed requestState marked as a page ask. On the
//     retry, the client's "accept" (with whatever content) waits for the
//     page's answer until the approval timeout; "decline" or "cancel"
//     decide.
//
// The URL carries the ask's id only: the id selects an ask and authorises
// nothing (Console.AskURL).

// pageHint closes the message of a URL elicitation.
const pageHint = "Answer on the approval console: open the link in the browser where you opened the console. " +
	"The link holds no password; without the console login it only says how to log in."

// pageParams is the URL elicitation for the console ticket id.
func (b *Broker) pageParams(s askSpec, id string) mcp.ElicitationParams {
	return mcp.ElicitationParams{Mode: mcp.ElicitationModeURL, Message: s.form.Message + "\n\n" + pageHint,
		ElicitationID: id, URL: b.console.AskURL(id)}
}

// askURL is the page of the console's ask id for a notification ("": no
// page).
func (b *Broker) askURL(id string) string {
	if id == "" || b.console == nil {
		return ""
	}
	return b.console.AskURL(id)
}

// askByPage puts s as a URL elicitation. ok is false, with nothing sent,
// when the console cannot list one more ask.
func (b *Broker) askByPage(ctx context.Context, s askSpec, modern bool) (a answer, pending *mcp.CallToolResult, reason grants.Reason, ok bool) {
	if modern {
		state, nonce := b.seal.sealAs(s.bind, s.timeout, true)
		t := b.ticket(nonce, s)
		t.retried = true
		if b.console.add(t) != nil {
			return answer{}, nil, "", false
		}
		if s.notify != nil {
			s.notify(nonce)
		}
		return answer{}, server.NewInputRequestBuilder(state).Elicit(elicitKey, b.pageParams(s, nonce)).ToolResult(), "", true
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	t := b.ticket("", s)
	t.alone = true // the client's accept is no answer: the page alone decides
	if b.console.add(t) != nil {
		return answer{}, nil, "", false
	}
	if s.notify != nil {
		s.notify(t.ID)
	}
	srv, session := server.ServerFromContext(ctx), server.ClientSessionFromContext(ctx)
	if srv != nil {
		go b.sendPageAsk(ctx, srv, t, s)
	}
	a, reason = b.await(ctx, t, s, ChannelConsole)
	if reason == "" && a.Channel == ChannelConsole && srv != nil && session != nil {
		// The page answered: tell the client the out-of-band part is done.
		if err := srv.SendElicitationComplete(ctx, session, t.ID); err != nil {
			b.logf("approval: notifications/elicitation/complete: %v", err)
		}
	}
	return a, nil, reason, true
}

// sendPageAsk sends a legacy client the URL elicitation for t. Only a
// decline or cancel is an answer; accept means the person opened the link,
// and a failure leaves the console to answer.
func (b *Broker) sendPageAsk(ctx context.Context, srv *server.MCPServer, t *ticket, s askSpec) {
	res, err := srv.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  b.pageParams(s, t.ID),
	})
	switch {
	case err != nil:
		if ctx.Err() == nil {
			b.logf("approval: URL elicitation: %v (the console still answers)", err)
		}
	case res.Action == mcp.ElicitationResponseActionDecline, res.Action == mcp.ElicitationResponseActionCancel:
		t.resolve(answer{Channel: ChannelElicitation, Action: res.Action})
	}
}

// resumeByPage handles a modern client's retry of a page ask: the
// client's decline or cancel decides; anything else waits for the page's
// answer until the ticket's deadline. The client's content is never read.
func (b *Broker) resumeByPage(ctx context.Context, s askSpec, nonce string) (answer, *mcp.CallToolResult, grants.Reason) {
	var t *ticket
	if b.console != nil {
		t = b.console.claim(nonce)
	}
	if t == nil { // withdrawn or expired on the console
		return answer{Channel: ChannelConsole}, nil, grants.ReasonApprovalTimeout
	}
	if res := server.ElicitationResponse(s.retry.InputResponses, elicitKey); res != nil &&
		(res.Action == mcp.ElicitationResponseActionDecline || res.Action == mcp.ElicitationResponseActionCancel) {
		a := answer{Channel: ChannelElicitation, Action: res.Action}
		if t.resolve(a) {
			return a, nil, ""
		}
		return <-t.done, nil, "" // the page answered first
	}
	ctx, cancel := context.WithDeadline(ctx, t.Deadline)
	defer cancel()
	a, reason := b.await(ctx, t, s, ChannelConsole)
	return a, nil, reason
}
