package webtools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// ToolName is the http_request tool's public name.
const ToolName = "http_request"

// ToolArgs are http_request's arguments.
type ToolArgs struct {
	URL            string            `json:"url" jsonschema:"http or https URL"`
	Method         string            `json:"method,omitempty" jsonschema:"GET (default), HEAD, POST, PUT, PATCH, DELETE or OPTIONS"`
	Headers        map[string]string `json:"headers,omitempty" jsonschema:"Request headers"`
	Body           string            `json:"body,omitempty" jsonschema:"Request body (POST, PUT, PATCH, DELETE)"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty" jsonschema:"Timeout for the whole call"`
	MaxBytes       int64             `json:"max_bytes,omitempty" jsonschema:"Cap on the response body"`
}

// ToolOutput is http_request's structured result.
type ToolOutput struct {
	Status      int               `json:"status"`
	Headers     map[string]string `json:"headers"`
	Body        string            `json:"body"`
	BodyBase64  bool              `json:"body_base64,omitempty"`
	ContentType string            `json:"content_type,omitempty"`
	Truncated   bool              `json:"truncated"`
	FinalURL    string            `json:"final_url"`
}

// Tool is http_request. Its Client is shared by calls (it holds no
// connection between them).
type Tool struct {
	Client *Client
}

// NewTool returns the tool with a client using the system resolver and roots.
func NewTool() *Tool { return &Tool{Client: NewClient(Options{})} }

// Name implements toolkit.Tool.
func (*Tool) Name() string { return ToolName }

// Capabilities implements toolkit.Tool.
func (*Tool) Capabilities() []grants.Capability {
	return []grants.Capability{grants.CapHTTPGet, grants.CapHTTPHead, grants.CapHTTPPost, grants.CapHTTPPut,
		grants.CapHTTPPatch, grants.CapHTTPDelete, grants.CapHTTPOptions}
}

// Definition implements toolkit.Tool.
func (t *Tool) Definition(p *grants.Policy) mcp.Tool {
	var secrets []string
	for name, s := range p.Secrets {
		secrets = append(secrets, fmt.Sprintf("%s (for %s)", name, strings.Join(s.Hosts, ", ")))
	}
	desc := "Make one HTTP(S) request. Each hop, redirects included, is decided by the policy on its method and host; " +
		"loopback, private and cloud-metadata addresses are refused unless a rule allows that host with allow_private. " +
		fmt.Sprintf("Default timeout %s; the body is capped at %d bytes (truncated is then true); binary bodies come back base64. ",
			p.Limits.HTTPTimeout, p.Limits.HTTPMaxBytes)
	if len(secrets) > 0 {
		desc += "The server adds these secrets itself to requests to their hosts (you never see their values): " + strings.Join(secrets, "; ") + ". "
	}
	desc += "A redirect to a host that needs a person's approval is not followed: call again with that URL.\n\n" + p.Summary(t.Capabilities()...)
	return mcp.NewTool(ToolName,
		mcp.WithDescription(desc),
		toolkit.WithSchemas(toolkit.EmbeddedSchema(schemaFiles, "http_request.input.json"), toolkit.EmbeddedSchema(schemaFiles, "http_request.output.json")),
		mcp.WithToolAnnotation(toolkit.Annotations("HTTP request", false, true, false, true)),
	)
}

// Plan implements toolkit.Tool: the first hop's requests, decided before
// any lookup or connection.
func (t *Tool) Plan(_ context.Context, env *toolkit.Env, raw json.RawMessage) (*toolkit.Plan, error) {
	p := env.Policy
	var args ToolArgs
	if err := toolkit.Decode(raw, &args); err != nil {
		return nil, err
	}
	if args.URL == "" {
		return nil, toolkit.Argf("argument \"url\" is required")
	}
	req := Request{URL: args.URL, Method: strings.ToUpper(args.Method), Headers: args.Headers, Body: args.Body,
		Timeout: p.Limits.HTTPTimeout, MaxBytes: p.Limits.HTTPMaxBytes}
	if req.Method == "" {
		req.Method = "GET"
	}
	if args.TimeoutSeconds < 0 || args.MaxBytes < 0 {
		return nil, toolkit.Argf("timeout_seconds and max_bytes must be positive")
	}
	if args.TimeoutSeconds > 0 {
		req.Timeout = time.Duration(args.TimeoutSeconds) * time.Second
		if req.Timeout > p.Limits.HTTPMaxTimeout {
			return nil, toolkit.Argf("timeout_seconds %d is over the limit of %d", args.TimeoutSeconds, int(p.Limits.HTTPMaxTimeout.Seconds()))
		}
	}
	if args.MaxBytes > 0 {
		if args.MaxBytes > p.Limits.HTTPMaxBytes {
			return nil, toolkit.Argf("max_bytes %d is over the limit of %d", args.MaxBytes, p.Limits.HTTPMaxBytes)
		}
		req.MaxBytes = args.MaxBytes
	}
	// No value is read here: each is read when a hop that attaches it
	// was allowed, its secret.use included.
	for name, s := range p.Secrets {
		req.Secrets = append(req.Secrets, Secret{Name: name, Hosts: s.Hosts, Header: s.Header, Format: s.Format, Load: s.Value})
	}
	if err := Validate(req); err != nil {
		return nil, toolkit.Argf("%v", strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
	}
	u, tgt, err := parseURL(req.URL) // the hop the client will make first
	if err != nil {
		return nil, toolkit.Argf("%v", err)
	}
	first := Hop{Index: 1, URL: u, Method: req.Method, Host: tgt.host(), Port: tgt.port, Path: cleanPath(u)}
	for _, s := range req.Secrets {
		if !s.MatchesHost(first.Host) {
			continue
		}
		// A secret the first hop would carry must have a value, or the call
		// is refused now, before anyone is asked to let it be sent.
		if err := p.Secrets[s.Name].Available(); err != nil {
			return nil, &toolkit.Refusal{Reason: grants.ReasonSecretUnavailable,
				Msg: fmt.Sprintf("%v; it is attached to requests to %s, so nothing was sent and nobody was asked: the server's operator must give it a value", err, first.Host)}
		}
		first.Secrets = append(first.Secrets, s.Name)
	}
	reqs := hopRequests(first)
	return &toolkit.Plan{Requests: reqs, Run: func(ctx context.Context, g toolkit.Grant) toolkit.Result {
		return t.run(ctx, env, req, g.Requests())
	}}, nil
}

// hopRequests are the requests one hop makes: its method on its host, and a
// secret.use for each secret that would be attached.
func hopRequests(h Hop) []grants.Request {
	net := grants.Request{Capability: h.Capability(), Target: h.Target(), Private: h.Private}
	net.Target.ToolName = ToolName
	net.Risk = grants.BaseRisk(net.Capability, "")
	out := []grants.Request{net}
	for _, name := range h.Secrets {
		out = append(out, grants.Request{Capability: grants.CapSecretUse,
			Target: grants.Target{ToolName: ToolName, Resource: name, Host: h.Host}, Risk: grants.BaseRisk(grants.CapSecretUse, "")})
	}
	return out
}

// run makes the request. granted are the first hop's requests as the call
// was granted them: the first hop, when it turns out to be exactly that
// (and public), was decided and audited already; every other hop goes
// through the mid-action gate.
func (t *Tool) run(ctx context.Context, env *toolkit.Env, req Request, granted []grants.Request) toolkit.Result {
	decide := func(ctx context.Context, hop Hop) (bool, error) {
		reqs := hopRequests(hop)
		if hop.Index == 1 && sameRequests(reqs, granted) && !hop.Private {
			return false, nil
		}
		allowPrivate := false
		for _, r := range reqs {
			// The gate audits, and lets an ask through only when this
			// exact request was approved (in this call: the first hop a
			// person approved, whose addresses turned out private).
			d, err := env.MidAction.Decide(ctx, r, grants.StageHop)
			if err != nil {
				return false, fmt.Errorf("hop %d refused: %v; nothing was sent to %s", hop.Index, err, hop.Host)
			}
			if r.Capability.IsNetwork() {
				allowPrivate = d.AllowPrivate
			}
		}
		return allowPrivate, nil
	}
	resp, err := t.Client.Do(ctx, req, decide)
	if err != nil {
		msg := Redact(err.Error(), req.Secrets)
		return toolkit.Failed("%s: %s", ToolName, msg)
	}
	out := ToolOutput{Status: resp.Status, Headers: resp.Headers, Body: resp.Body, BodyBase64: resp.BodyBase64,
		ContentType: resp.ContentType, Truncated: resp.Truncated, FinalURL: resp.FinalURL}
	text := fmt.Sprintf("HTTP %d from %s", resp.Status, resp.FinalURL)
	if resp.Truncated {
		text += " (body truncated)"
	}
	if resp.BodyBase64 {
		text += fmt.Sprintf("\n[%s body, %d bytes, base64 in structured content]", resp.ContentType, resp.Bytes)
	} else if resp.Body != "" {
		text += "\n\n" + resp.Body
	}
	return toolkit.Result{Tool: mcp.NewToolResultStructured(out, text),
		Outcome: toolkit.Outcome{HTTPStatus: resp.Status, Bytes: resp.Bytes}}
}

func sameRequests(a, b []grants.Request) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key() != b[i].Key() {
			return false
		}
	}
	return true
}
