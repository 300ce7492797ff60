package approval

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/display"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// callContext is what a person needs besides the asks to judge a call: the
// whole command line or URL (not only the part that asks), where it runs,
// who asks, and for which workspace. Every field is escaped for display
// (model-chosen text never reaches a person raw).
type callContext struct {
	Line      string `json:"line,omitempty"`
	Cwd       string `json:"cwd,omitempty"`
	Client    string `json:"client,omitempty"`
	Workspace string `json:"workspace,omitempty"`
}

// maxLineShown bounds the call line shown (the asks show the rest).
const maxLineShown = 2000

// contextOf reads the call's own words: the command and cwd of a command,
// the method and URL of an HTTP request.
func contextOf(ctx context.Context, call toolkit.ApprovalCall) callContext {
	var args struct {
		Command string `json:"command"`
		Cwd     string `json:"cwd"`
		URL     string `json:"url"`
		Method  string `json:"method"`
	}
	_ = json.Unmarshal(call.Args, &args) // already decoded strictly by the tool
	cc := callContext{Client: clientName(ctx)}
	if call.Policy != nil {
		cc.Workspace = display.Escape(call.Policy.Workspace)
	}
	switch {
	case args.Command != "":
		cc.Line = clip(args.Command)
		cc.Cwd = "(the workspace)"
		if args.Cwd != "" {
			cc.Cwd = display.Escape(args.Cwd)
		}
	case args.URL != "":
		m := args.Method
		if m == "" {
			m = "GET"
		}
		cc.Line = clip(strings.ToUpper(m) + " " + args.URL)
	}
	return cc
}

func clip(s string) string {
	s = display.Escape(s)
	if len(s) > maxLineShown {
		s = s[:maxLineShown] + "… (" + strconv.Itoa(len(s)-maxLineShown) + " more bytes)"
	}
	return s
}

// clientName is the client's name and version from initialize (legacy) or
// the request's own declaration (modern), escaped; "unknown client" when it
// gave none.
func clientName(ctx context.Context) string {
	var info *mcp.Implementation
	if p := server.RequestProtocolInfoFromContext(ctx); p != nil && p.ClientInfo != nil {
		info = p.ClientInfo
	} else if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		ci := s.GetClientInfo()
		info = &ci
	}
	if info == nil || info.Name == "" {
		return "unknown client"
	}
	name := info.Name
	if info.Version != "" {
		name += " " + info.Version
	}
	return display.Escape(name)
}

// riskLabel makes high and critical risk stand out in plain text.
func riskLabel(r grants.Risk) string {
	switch {
	case r >= grants.RiskCritical:
		return "!! risk critical !!"
	case r >= grants.RiskHigh:
		return "! risk high"
	}
	return "risk " + r.String()
}

// sessionOffered reports whether "allow for this session" means anything
// for these asks: only when a rule gives it an expiry. Otherwise the form
// does not offer it (it would mean once).
func sessionOffered(asks []grants.Decision) bool {
	for _, d := range asks {
		if d.ApprovalExpires <= 0 {
			return false
		}
	}
	return len(asks) > 0
}
