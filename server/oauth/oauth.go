// Package oauth makes the HTTP transport an OAuth 2.1 resource server, as
// the MCP authorization spec asks of an HTTP MCP server: it verifies the
// JWT access tokens an identity provider issued for this server, serves the
// protected resource metadata (RFC 9728) that tells clients where to get
// one, and builds the WWW-Authenticate challenges of a refusal.
//
// Security model. A request gets through only with a token that
//   - says typ "at+jwt" in its header (RFC 9068), so an ID token of the
//     same issuer is refused (unless the host sets allow_typ_jwt, said at
//     start-up);
//   - is a JWS signed with an asymmetric algorithm (RS*, PS*, ES*, EdDSA) by
//     a key of the configured JWKS (never "none", never an HMAC whose
//     secret could be a public key);
//   - names the configured issuer exactly and the configured audience (RFC
//     8707: a token minted for another resource is refused, never passed
//     on — this server forwards no token anywhere);
//   - has not expired and is already valid (60 s of clock skew), and has
//     a subject, which becomes the principal approvals, remembered
//     approvals, the data-flow mark and audit records are bound to;
//   - carries every required scope (else 403 insufficient_scope, naming all
//     of them).
//
// Keys come from a JWKS file or URL, cached and refreshed; a kid the cache
// does not know triggers at most one refresh per minimum interval. When the
// issuer cannot be reached the cached keys still verify; a token no cached
// key verifies is refused. Nothing here ever lets an unverified token in.
package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Config is the `[http]` OAuth settings, resolved.
type Config struct {
	// Issuer is the authorization server's issuer identifier; the token's
	// iss must equal it.
	Issuer string
	// Audience is this server's resource identifier (its /mcp URL, RFC
	// 8707); the token's aud must contain it.
	Audience string
	// JWKSURL or JWKSFile is where the issuer's signing keys are.
	JWKSURL  string
	JWKSFile string
	// RequiredScopes must all be granted by the token.
	RequiredScopes []string
	// AllowTypJWT accepts tokens whose header says typ "JWT", or has no
	// typ, beside RFC 9068's "at+jwt" ([http] allow_typ_jwt): for issuers
	// that type their access tokens so. An ID token of the same issuer is
	// then told apart by its audience alone.
	AllowTypJWT bool
	// Leeway is the clock skew allowed on exp, nbf and iat (default 60 s).
	Leeway time.Duration
	// Client fetches JWKSURL (default: a client with a 10 s timeout).
	Client Doer
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// signingAlgorithms are the only algorithms a token may use: asymmetric
// ones, so no public key can be abused as an HMAC secret.
var signingAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// Principal is who a verified token speaks for.
type Principal struct {
	Subject string
	Scopes  []string
	Expiry  time.Time
}

// Error is a refused token: Status is 401 (invalid_token) or 403
// (insufficient_scope).
type Error struct {
	Status int
	Code   string // "invalid_token" or "insufficient_scope"
	Desc   string
}

func (e *Error) Error() string { return e.Code + ": " + e.Desc }

func invalid(format string, a ...any) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Desc: fmt.Sprintf(format, a...)}
}

// Verifier checks access tokens against one Config. It is safe for
// concurrent use.
type Verifier struct {
	cfg      Config
	keys     *keyCache
	verified verifiedCache
}

// New checks the config and returns its Verifier. It fetches no keys: the
// first token does (or Warm).
func New(cfg Config) (*Verifier, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Client == nil {
		cfg.Client = defaultClient()
	}
	return &Verifier{cfg: cfg, keys: newKeyCache(cfg)}, nil
}

func (c Config) validate() error {
	if c.Issuer == "" {
		return errors.New(`[http] auth = "oauth" needs issuer`)
	}
	if c.Audience == "" {
		return errors.New(`[http] auth = "oauth" needs audience (this server's /mcp URL)`)
	}
	if u, err := url.Parse(c.Audience); err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" {
		return fmt.Errorf("[http] audience %q: want an absolute URL without a fragment, such as https://mcp.example.com/mcp", c.Audience)
	}
	if (c.JWKSURL == "") == (c.JWKSFile == "") {
		return errors.New(`[http] auth = "oauth" needs exactly one of jwks_url and jwks_file`)
	}
	if c.JWKSURL != "" {
		u, err := url.Parse(c.JWKSURL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname()))) {
			return fmt.Errorf("[http] jwks_url %q: want an https URL (http only on loopback)", c.JWKSURL)
		}
	}
	for _, s := range c.RequiredScopes {
		if s == "" || strings.ContainsAny(s, " \"\\") {
			return fmt.Errorf("[http] required_scopes: %q is not a scope token", s)
		}
	}
	return nil
}

func isLoopbackHost(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1" || strings.HasPrefix(h, "127.")
}

// claims are the registered claims plus the scope forms issuers use.
type claims struct {
	jwt.Claims
	Scope string          `json:"scope"`
	Scp   json.RawMessage `json:"scp"`
}

// Verify checks one bearer token and returns its principal, or an *Error.
func (v *Verifier) Verify(ctx context.Context, raw string) (Principal, error) {
	now := v.cfg.Now()
	if p, ok := v.verified.get(raw, now, v.cfg.Leeway); ok {
		return p, nil
	}
	p, err := v.verify(ctx, raw)
	if err == nil {
		v.verified.put(raw, p, now)
	}
	return p, err
}

func (v *Verifier) verify(ctx context.Context, raw string) (Principal, error) {
	tok, err := jwt.ParseSigned(raw, signingAlgorithms)
	if err != nil {
		return Principal{}, invalid("not a signed JWT with an accepted algorithm")
	}
	if len(tok.Headers) != 1 {
		return Principal{}, invalid("want exactly one signature")
	}
	h := tok.Headers[0]
	if err := v.checkType(h); err != nil {
		return Principal{}, err
	}
	key, err := v.keys.lookup(ctx, h.KeyID, jose.SignatureAlgorithm(h.Algorithm))
	if err != nil {
		return Principal{}, invalid("%v", err)
	}
	var c claims
	if err := tok.Claims(key.Key, &c); err != nil {
		return Principal{}, invalid("signature does not verify")
	}
	if err := v.checkClaims(&c); err != nil {
		return Principal{}, err
	}
	scopes := c.scopes()
	if missing := missingScopes(v.cfg.RequiredScopes, scopes); len(missing) > 0 {
		return Principal{}, &Error{Status: http.StatusForbidden, Code: "insufficient_scope",
			Desc: "the token lacks scope " + strings.Join(missing, " ")}
	}
	return Principal{Subject: c.Subject, Scopes: scopes, Expiry: c.Expiry.Time()}, nil
}

// checkType wants RFC 9068's typ "at+jwt" ("application/at+jwt" is the
// same media type; media types compare without case), so that an ID token
// or any other JWT the issuer signs is never taken for an access token.
// AllowTypJWT lets "JWT" and a missing typ through too.
func (v *Verifier) checkType(h jose.Header) error {
	typ, _ := h.ExtraHeaders[jose.HeaderType].(string)
	switch t := strings.TrimPrefix(strings.ToLower(typ), "application/"); {
	case t == "at+jwt":
		return nil
	case v.cfg.AllowTypJWT && (t == "jwt" || typ == ""):
		return nil
	}
	return invalid("the token's typ is not at+jwt (RFC 9068): it is not an access token (an issuer whose access tokens say typ JWT needs [http] allow_typ_jwt = true)")
}

// AllowsTypJWT reports whether tokens typed JWT or untyped are accepted,
// for the start-up warning.
func (v *Verifier) AllowsTypJWT() bool { return v.cfg.AllowTypJWT }

func (v *Verifier) checkClaims(c *claims) error {
	if c.Expiry == nil {
		return invalid("the token has no exp")
	}
	if c.Subject == "" {
		return invalid("the token has no sub")
	}
	exp := jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: jwt.Audience{v.cfg.Audience}, Time: v.cfg.Now()}
	switch err := c.ValidateWithLeeway(exp, v.cfg.Leeway); {
	case err == nil:
		return nil
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return invalid("issued by %q, not %q", c.Issuer, v.cfg.Issuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return invalid("the token is for another resource, not %s", v.cfg.Audience)
	case errors.Is(err, jwt.ErrExpired):
		return invalid("the token has expired")
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return invalid("the token is not valid yet")
	default:
		return invalid("%v", err)
	}
}

func (c *claims) scopes() []string {
	out := strings.Fields(c.Scope)
	if len(c.Scp) == 0 {
		return out
	}
	var list []string
	if json.Unmarshal(c.Scp, &list) == nil {
		return append(out, list...)
	}
	var one string
	if json.Unmarshal(c.Scp, &one) == nil {
		return append(out, strings.Fields(one)...)
	}
	return out
}

func missingScopes(required, granted []string) []string {
	var missing []string
	for _, s := range required {
		if !slices.Contains(granted, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// MetadataURL is where this resource's metadata lives (RFC 9728 §3.1: the
// well-known path inserted between the host and the resource's path).
func (v *Verifier) MetadataURL() string {
	u, _ := url.Parse(v.cfg.Audience) // validated in New
	path := strings.TrimSuffix(u.Path, "/")
	return u.Scheme + "://" + u.Host + WellKnownPath + path
}

// WellKnownPath is the root of the protected resource metadata paths.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// Metadata is the protected resource metadata document (RFC 9728 §2).
type Metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// Metadata returns this resource's metadata document.
func (v *Verifier) Metadata() Metadata {
	return Metadata{
		Resource:               v.cfg.Audience,
		AuthorizationServers:   []string{v.cfg.Issuer},
		ScopesSupported:        v.cfg.RequiredScopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "onellm-mcp",
	}
}

// ServeMetadata answers GET on WellKnownPath and its /mcp path form.
func (v *Verifier) ServeMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=300")
	_ = json.NewEncoder(w).Encode(v.Metadata())
}

// Challenge is the WWW-Authenticate value for a refusal: err is nil when
// no token was presented, else what Verify returned.
func (v *Verifier) Challenge(err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Bearer resource_metadata=%q", v.MetadataURL())
	if len(v.cfg.RequiredScopes) > 0 {
		fmt.Fprintf(&b, ", scope=%q", strings.Join(v.cfg.RequiredScopes, " "))
	}
	var e *Error
	if errors.As(err, &e) {
		fmt.Fprintf(&b, ", error=%q, error_description=%q", e.Code, quoteSafe(e.Desc))
	}
	return b.String()
}

// quoteSafe keeps a description inside an auth-param quoted string: no
// quotes, backslashes or control characters.
func quoteSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < 0x20 || r == 0x7f {
			return '\''
		}
		return r
	}, s)
}

// usableKey reports whether a JWKS entry may verify a token signed with
// alg: a public signing key of a matching type.
func usableKey(k jose.JSONWebKey, alg jose.SignatureAlgorithm) bool {
	if k.Use != "" && k.Use != "sig" {
		return false
	}
	if k.Algorithm != "" && k.Algorithm != string(alg) {
		return false
	}
	switch k.Key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(string(alg), "RS") || strings.HasPrefix(string(alg), "PS")
	case *ecdsa.PublicKey:
		return strings.HasPrefix(string(alg), "ES")
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false // private or symmetric keys never verify tokens
}
