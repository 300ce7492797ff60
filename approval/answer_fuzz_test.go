package approval

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
)

// FuzzElicitationAnswer checks a person's answer, as a client sends it
// (an action and the form's content as JSON), against the approval form
// and a question's form. Properties, against a reference written from the
// forms: an approval is approved only for accept with exactly
// {"decision": "allow_once" | "allow_for_session"} (the latter only when
// the form offered it); cancel is cancelled;
// everything else is declined. A question's accept holds only exactly
// {"answer": string} (one of the choices when there are any, and not over
// the size bound).
func FuzzElicitationAnswer(f *testing.F) {
	for _, s := range []struct{ action, content string }{
		{"accept", `{"decision":"allow_once"}`},
		{"accept", `{"decision":"allow_for_session"}`},
		{"accept", `{"decision":"deny"}`},
		{"accept", `{"decision":"allow_once","extra":1}`},
		{"accept", `{"decision":["allow_once"]}`},
		{"accept", `{"Decision":"allow_once"}`},
		{"accept", `{"answer":"yes"}`},
		{"accept", `null`},
		{"decline", `{"decision":"allow_once"}`},
		{"cancel", `{}`},
		{"ACCEPT", `{"decision":"allow_once"}`},
		{"", `not json`},
	} {
		f.Add(s.action, s.content, true)
		f.Add(s.action, s.content, false)
	}
	q := question{Text: "Which?", Choices: []string{"yes", "no"}}
	free := question{Text: "Why?"}
	f.Fuzz(func(t *testing.T, action, content string, sessionOK bool) {
		var v any
		if json.Unmarshal([]byte(content), &v) != nil {
			v = content
		}
		a := answer{Channel: "elicitation", Action: mcp.ElicitationResponseAction(action), Content: v}
		m, isMap := v.(map[string]any)
		d, _ := m["decision"].(string)

		decision, reason := decisionOf(a, sessionOK)
		approve := action == "accept" && isMap && len(m) == 1 && (d == AllowOnce || d == AllowForSession && sessionOK)
		switch {
		case approve && (reason != grants.ReasonApproved || decision != d):
			t.Fatalf("%q %s: %q %s, want approved %q", action, content, decision, reason, d)
		case !approve && reason == grants.ReasonApproved:
			t.Fatalf("%q %s approved as %q", action, content, decision)
		case !approve && action == "cancel" && reason != grants.ReasonCancelled:
			t.Fatalf("cancel gave %s", reason)
		case !approve && action != "cancel" && reason != grants.ReasonDeclined:
			t.Fatalf("%q %s gave %s, want declined", action, content, reason)
		}

		s, isStr := m["answer"].(string)
		for _, qq := range []question{q, free} {
			gotAction, text, ok := answerOf(qq, a)
			want := action == "decline" || action == "cancel" ||
				(action == "accept" && isMap && len(m) == 1 && isStr && len(s) <= maxAnswerBytes && (len(qq.Choices) == 0 || slices.Contains(qq.Choices, s)))
			if ok != want {
				t.Fatalf("question %q: %q %s accepted=%v, want %v", qq.Text, action, content, ok, want)
			}
			if ok && (gotAction != action || (action == "accept" && text != s) || (action != "accept" && text != "")) {
				t.Fatalf("question %q: %q %s gave %q %q", qq.Text, action, content, gotAction, text)
			}
		}
	})
}

// FuzzConsoleAnswer checks a form posted to the console (a query string)
// against an approval ticket and a question ticket. Properties: an
// approval takes exactly one decision field with one of the form's three
// values and nothing else counts; a question takes accept with an answer
// the question allows, or decline.
func FuzzConsoleAnswer(f *testing.F) {
	for _, s := range []string{
		"decision=allow_once", "decision=allow_for_session", "decision=deny", "decision=allow_once&decision=deny",
		"decision=ALLOW_ONCE", "decision=", "action=accept&answer=yes", "action=accept&answer=maybe",
		"action=decline", "action=cancel", "action=accept&answer=yes&answer=no", "%zz", "",
	} {
		f.Add(s)
	}
	approval := newTicket("t1", kindApproval, "read_file", "stdio", time.Now(), time.Minute)
	asked := newTicket("t2", kindQuestion, "ask_user", "stdio", time.Now(), time.Minute)
	asked.Question = &question{Text: "Which?", Choices: []string{"yes", "no"}}
	f.Fuzz(func(t *testing.T, form string) {
		vals, err := url.ParseQuery(form)
		if err != nil {
			return
		}
		a, err := consoleAnswer(approval, vals)
		ds := vals["decision"]
		want := len(ds) == 1 && slices.Contains([]string{AllowOnce, AllowForSession, Deny}, ds[0])
		if (err == nil) != want {
			t.Fatalf("approval form %q: accepted=%v, want %v", form, err == nil, want)
		}
		if err == nil {
			if a.Channel != ChannelConsole || a.Action != mcp.ElicitationResponseActionAccept {
				t.Fatalf("approval form %q: %+v", form, a)
			}
			if d, r := decisionOf(a, true); (r == grants.ReasonApproved) != (ds[0] != Deny) || (r == grants.ReasonApproved && d != ds[0]) {
				t.Fatalf("approval form %q decided %q %s", form, d, r)
			}
		}

		a, err = consoleAnswer(asked, vals)
		one := func(k string) string {
			if v := vals[k]; len(v) == 1 {
				return v[0]
			}
			return ""
		}
		wantQ := one("action") == "decline" || (one("action") == "accept" && slices.Contains(asked.Question.Choices, one("answer")))
		if (err == nil) != wantQ {
			t.Fatalf("question form %q: accepted=%v, want %v", form, err == nil, wantQ)
		}
	})
}
