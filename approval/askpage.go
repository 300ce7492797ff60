package approval

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The page for one ask, which a URL elicitation links to.
//
// The link is http://ADDR/ask/ID: ID is the ask's unguessable id, which
// selects an ask and authorises nothing. The link holds no token and no
// login path, because the client (and the model behind it) reads it.
//
// Authentication stays the console's own: the HttpOnly, SameSite=Strict
// cookie scoped to the login's secret path /s/SID/. The cookie is not
// widened to "/": cookies are not separated by port, so a cookie for "/"
// would go to every server on localhost, including one a sandboxed command
// with full network could open, which could then answer asks. Instead the
// link's page (served without a login, showing nothing of the ask) runs a
// script that reads the login's SID from the browser's localStorage, which
// is separate per origin (port included) and written only by the console's
// own page, and moves to /s/SID/ask/ID, where the cookie applies. Without a
// login in this browser the page says how to log in (the console link the
// server printed) and remembers the ask, so the console's page comes back
// to it once logged in. Without JavaScript the person answers on the
// console's page, which lists every ask.
//
// The answer is posted to /s/SID/ask/ID with the console's CSRF token and
// Origin checks (Console.take), the same as an answer on the console page,
// and it answers that ask only.

// askIDBytes is the length of an ask's id (randomID, or a state's nonce).
const askIDBytes = 16

// AskURL is the address of the console page for the one ask id.
func (c *Console) AskURL(id string) string { return c.url + "ask/" + id }

// parseAskID accepts an ask id as randomID writes it: strict unpadded
// base64url of 16 bytes, one spelling only.
func parseAskID(s string) (string, bool) {
	if len(s) != base64.RawURLEncoding.EncodedLen(askIDBytes) {
		return "", false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != askIDBytes {
		return "", false
	}
	return s, true
}

// setPageHeaders sets what every console page carries: its content type,
// a policy that runs only the page's own nonce'd script and style, and a
// referrer policy of same-origin: the secret login path never goes to
// another site, and a form the page posts carries its real Origin (with
// no-referrer, Chromium sends "Origin: null" on a form's POST, which the
// Origin check refuses).
func setPageHeaders(w http.ResponseWriter, nonce string) {
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("Content-Security-Policy", fmt.Sprintf(
		"default-src 'none'; script-src 'nonce-%s'; style-src 'nonce-%s'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		nonce, nonce))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
}

// serveAskLink answers GET /ask/ID (the link itself), before any login
// check, and reports false for every other request. It shows nothing of
// the ask and the same page whether or not ID is pending.
func (c *Console) serveAskLink(w http.ResponseWriter, r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/ask/")
	if !ok {
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return true
	}
	id, ok := parseAskID(rest)
	if !ok {
		http.NotFound(w, r)
		return true
	}
	nonce := randomID()
	setPageHeaders(w, nonce)
	if err := c.templates().askLink.Execute(w, map[string]string{"ID": id, "Nonce": nonce, "Console": c.url}); err != nil {
		c.log.Printf("approval console: %v", err)
	}
	return true
}

// askView is what the page for one ask shows.
type askView struct {
	Ask     pendingView
	CSRF    string
	Nonce   string
	Message string // after an answer
	Done    bool
}

// pendingOf returns the console's card of the pending ask id, found by
// its id (the page's view would render every card to show one).
func (c *Console) pendingOf(id string) (pendingView, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	t, ok := c.pending[id]
	if !ok {
		return pendingView{}, false
	}
	return c.cardOf(t, c.now()), true
}

// askLinkGrace is how long the ask page waits for an id that is not listed
// yet: a joined server sends its URL elicitation as soon as it has posted the
// ask to the hub, so a person (or a client) may open the link a moment
// before the hub has read the post.
const askLinkGrace = 2 * time.Second

// awaitPendingOf is pendingOf, waiting up to grace for the ask to be listed.
func (c *Console) awaitPendingOf(ctx context.Context, id string, grace time.Duration) (pendingView, bool) {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for {
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		if p, ok := c.pendingOf(id); ok {
			return p, true
		}
		select {
		case <-changed:
		case <-timer.C:
			return pendingView{}, false
		case <-ctx.Done():
			return pendingView{}, false
		}
	}
}

// askPage serves GET /s/SID/ask/ID (behind the console's login): that one
// ask with the console card's choices; 404 when it is not pending.
func (c *Console) askPage(w http.ResponseWriter, r *http.Request) {
	id, ok := parseAskID(r.PathValue("id"))
	var p pendingView
	if ok {
		p, ok = c.awaitPendingOf(r.Context(), id, askLinkGrace)
	}
	if !ok {
		c.askDone(w, http.StatusNotFound, "This ask is not waiting: it was answered, withdrawn or timed out, or the link is wrong.")
		return
	}
	v := askView{Ask: p, CSRF: c.csrf, Nonce: randomID()}
	setPageHeaders(w, v.Nonce)
	if err := c.templates().askPage.Execute(w, v); err != nil {
		c.log.Printf("approval console: %v", err)
	}
}

// askAnswer takes the answer posted from the page for one ask: for that
// ask only, whatever id the form holds.
func (c *Console) askAnswer(w http.ResponseWriter, r *http.Request) {
	id, ok := parseAskID(r.PathValue("id"))
	if !ok {
		c.askDone(w, http.StatusNotFound, "No such ask.")
		return
	}
	code, msg, _ := c.take(w, r, id)
	switch code {
	case http.StatusOK:
		msg = "Your answer is recorded and the call goes on. You can close this page."
	case http.StatusAccepted:
		msg = "Not confirmed yet: your answer was " + msg + "."
	default:
		msg = "Not recorded: " + msg + "."
	}
	c.askDone(w, code, msg)
}

// askDone shows a short outcome page with a way back to the console.
func (c *Console) askDone(w http.ResponseWriter, code int, msg string) {
	v := askView{Nonce: randomID(), Message: msg, Done: true}
	setPageHeaders(w, v.Nonce)
	w.WriteHeader(code)
	if err := c.templates().askPage.Execute(w, v); err != nil {
		c.log.Printf("approval console: %v", err)
	}
}

// Storage keys the console's pages share in the browser (per origin).
const (
	storeLogin = "onellm_console_sid"  // the login's secret path segment
	storeNext  = "onellm_console_next" // an ask opened before logging in
)

const askStyle = `body{font:16px/1.4 system-ui,sans-serif;margin:0 auto;max-width:40rem;padding:.75rem;color:#111;background:#fafafa}
h1{font-size:1.2rem}.card{background:#fff;border:1px solid #ccc;border-radius:.5rem;padding:.75rem;margin:.5rem 0;overflow-wrap:anywhere}
.meta{color:#555;font-size:.875rem}.what{font-family:ui-monospace,monospace;font-size:.9rem;margin-top:.4rem}
form{display:flex;flex-wrap:wrap;gap:.5rem;margin-top:.75rem}
button{font-size:1rem;padding:.5rem .9rem;border-radius:.4rem;border:1px solid #888;background:#eee;flex:1 1 8rem}
button.allow{background:#d8f0d8}button.deny{background:#f6d6d6}input[type=text]{font-size:1rem;padding:.45rem;flex:1 1 100%}
.risk-critical{border:3px solid #b00000;background:#fff0f0}.risk-high{border:2px solid #c25e00;background:#fff7ee}
.lvl{font-weight:700;text-transform:uppercase;font-size:.8rem}`

const askLinkHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>onellm-mcp: an ask is waiting</title><style nonce="{{.Nonce}}">` + askStyle + `</style></head><body>
<h1>onellm-mcp: an ask is waiting for your answer</h1>
<p id="login">To answer it, log into the approval console in this browser first: open the console link the server printed
at start-up ({{.Console}}?token=…, on its stderr, and in the console.token file of its state folder). You come back here by yourself.</p>
<noscript><p>This page needs JavaScript to find your console login. Without it, answer on the console's page, which lists every ask.</p></noscript>
<script nonce="{{.Nonce}}">
(function(){
"use strict";
var id={{.ID}},sid=null;
try{sid=localStorage.getItem('` + storeLogin + `');localStorage.setItem('` + storeNext + `',JSON.stringify({id:id,at:Date.now()}))}catch(e){}
if(sid&&/^[A-Za-z0-9_-]{22}$/.test(sid))location.replace('/s/'+sid+'/ask/'+id);
})();
</script></body></html>
`

const askPageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>onellm-mcp: your answer</title><style nonce="{{.Nonce}}">` + askStyle + `</style></head><body>
{{- if .Done}}
<h1>onellm-mcp</h1><p id="outcome">{{.Message}}</p><p class="meta"><a href="../">The console</a> lists every ask.</p>
{{- else}}{{with .Ask}}
<h1>onellm-mcp asks for your answer</h1>
<div id="pending"><div class="card{{if .Level}} risk-{{.Level}}{{end}}" data-id="{{.ID}}">
 <div><b>{{.Tool}}</b>{{if .Level}} <span class="lvl">{{.Level}} risk</span>{{end}} <span class="meta">times out in {{.SecondsLeft}}s</span></div>
 {{- if eq .Kind "approval"}}
 {{- with .Context}}{{if .Line}}<div>call <code>{{.Line}}</code></div>{{end}}{{if .Cwd}}<div>in {{.Cwd}}</div>{{end}}<div class="meta">from {{.Client}}, workspace {{.Workspace}}</div>{{end}}
 {{- range .Items}}<div class="what">{{.What}}</div><div class="meta">rule {{.Rule}}, risk {{.Risk}}, "for session" holds {{.Session}}</div>{{end}}
 <form method="post"><input type="hidden" name="csrf" value="{{$.CSRF}}">
  <button class="allow" name="decision" value="allow_once">Allow once</button>
  {{- if .Session}}<button class="allow" name="decision" value="allow_for_session">Allow for session</button>{{end}}
  <button class="deny" name="decision" value="deny">Deny</button></form>
 {{- else}}
 <div class="what">{{.Question}}</div>
 <form method="post"><input type="hidden" name="csrf" value="{{$.CSRF}}">
  {{- if .Choices}}{{range .Choices}}<button name="answer" value="{{.}}">{{.}}</button>{{end}}<input type="hidden" name="action" value="accept">
  {{- else}}<input type="text" name="answer" value="{{.Default}}" aria-label="Answer"><button class="allow" name="action" value="accept">Answer</button>{{end}}
 </form>
 <form method="post"><input type="hidden" name="csrf" value="{{$.CSRF}}"><button class="deny" name="action" value="decline">Decline</button></form>
 {{- end}}
</div></div>
<p class="meta">Nothing runs unless you allow it. <a href="../">The console</a> lists every ask.</p>
{{- end}}{{end}}
<script nonce="{{.Nonce}}">try{localStorage.removeItem('` + storeNext + `')}catch(e){}</script>
</body></html>
`
