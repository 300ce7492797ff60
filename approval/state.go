package approval

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// The requestState a modern (2026-07-28) client echoes back on its retry is
// attacker-controlled: the client, and so the model driving it, can send any
// bytes. It is therefore a sealed token:
//
//	base64url(claims JSON) "." base64url(HMAC-SHA256(key, claims JSON))
//
// with a key made from crypto/rand when the server starts (a restart
// invalidates every state in flight). The claims bind the kind of question,
// the tool, a digest of the canonical arguments, a digest of the principal,
// a digest of the exact requests asked about (their keys and rules), an
// expiry (the approval timeout) and a one-time nonce. The claims carry only
// digests, so the state reveals nothing the client does not already know.
//
// Opening checks, in order: shape and MAC (forged), binding (mismatched),
// expiry (expired), nonce not seen before (replayed). The nonce is spent on
// the first opening that passes the other checks, and kept in a bounded set
// until it expires; when the set is full of live nonces new ones are refused
// (fail closed) rather than forgetting old ones.

var (
	errForged   = errors.New("requestState is not one this server sealed")
	errMismatch = errors.New("requestState was issued for a different call")
	errExpired  = errors.New("requestState has expired")
	errReplayed = errors.New("requestState was already used")
	errTooMany  = errors.New("too many approvals in flight")
)

// stateKind says what a state is an answer to.
type stateKind string

const (
	kindApproval stateKind = "approval"
	kindQuestion stateKind = "question"
)

// binding is what a state must match to be accepted for a call.
type binding struct {
	Kind      stateKind
	Tool      string
	Args      []byte // digest of the canonical arguments
	Principal string
	Asks      []byte // digest of the exact requests asked about; nil for questions
}

// claims is the sealed content.
type claims struct {
	V     int       `json:"v"`
	Kind  stateKind `json:"k"`
	Tool  string    `json:"t"`
	Args  []byte    `json:"a"`
	Who   []byte    `json:"p"`
	Asks  []byte    `json:"r,omitempty"`
	Exp   int64     `json:"e"` // unix milliseconds
	Nonce []byte    `json:"n"`
	// Page is set when the ask went to the client as a URL elicitation:
	// the answer then comes only from the console page, never from the
	// client's retry.
	Page bool `json:"u,omitempty"`
}

// opened is what a good state says: the nonce (the pending ask's id) and
// whether the ask was put as a URL elicitation (answered on the page only).
type opened struct {
	nonce string
	page  bool
}

// sealer seals and opens states with a per-process key.
type sealer struct {
	// key is made on first use, not when the server starts: the first
	// crypto/rand read of a process costs ~0.1 ms (the runtime sets up its
	// vDSO getrandom state), which stays off the path to the first answer.
	key func() []byte
	now func() time.Time
	max int // nonces kept at most

	mu    sync.Mutex
	spent map[string]time.Time // nonce → expiry
}

func newSealer(now func() time.Time, maxNonces int) *sealer {
	return &sealer{key: sync.OnceValue(newStateKey), now: now, max: maxNonces, spent: map[string]time.Time{}}
}

// newStateKey is a fresh 256-bit key. crypto/rand.Read never fails (since
// Go 1.24 it crashes the program rather than return fewer bytes).
func newStateKey() []byte {
	key := make([]byte, 32)
	rand.Read(key)
	return key
}

// seal returns a state for b that expires after ttl, and its nonce, for
// an ask put as a form.
func (s *sealer) seal(b binding, ttl time.Duration) (state string, nonce string) {
	return s.sealAs(b, ttl, false)
}

// sealAs is seal; page marks an ask put as a URL elicitation.
func (s *sealer) sealAs(b binding, ttl time.Duration, page bool) (state string, nonce string) {
	n := make([]byte, 16)
	if _, err := rand.Read(n); err != nil {
		panic("approval: crypto/rand failed: " + err.Error()) // cannot happen on Linux; never seal a guessable nonce
	}
	c := claims{V: 1, Kind: b.Kind, Tool: b.Tool, Args: b.Args, Who: digest(b.Principal), Asks: b.Asks,
		Exp: s.now().Add(ttl).UnixMilli(), Nonce: n, Page: page}
	body, _ := json.Marshal(c) // only byte slices, strings and numbers: cannot fail
	mac := hmac.New(sha256.New, s.key())
	mac.Write(body)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(body) + "." + enc.EncodeToString(mac.Sum(nil)), enc.EncodeToString(n)
}

// open verifies state against b and spends its nonce. It returns the
// nonce (the id of the pending approval) and the ask's mode when the state
// is good.
func (s *sealer) open(state string, b binding) (opened, error) {
	// Strict: a state has exactly one spelling. A lenient decoder accepts
	// other values in the last character's unused bits, so a changed string
	// would open as the same state.
	enc := base64.RawURLEncoding.Strict()
	body64, mac64, ok := strings.Cut(state, ".")
	if !ok || len(state) > 4096 {
		return opened{}, errForged
	}
	body, err1 := enc.DecodeString(body64)
	sum, err2 := enc.DecodeString(mac64)
	if err1 != nil || err2 != nil {
		return opened{}, errForged
	}
	mac := hmac.New(sha256.New, s.key())
	mac.Write(body)
	if !hmac.Equal(sum, mac.Sum(nil)) {
		return opened{}, errForged
	}
	var c claims
	if err := json.Unmarshal(body, &c); err != nil || c.V != 1 || len(c.Nonce) != 16 {
		return opened{}, errForged // sealed by us, so this means a bug; still no
	}
	if c.Kind != b.Kind || c.Tool != b.Tool || !bytes.Equal(c.Args, b.Args) ||
		!hmac.Equal(c.Who, digest(b.Principal)) || !bytes.Equal(c.Asks, b.Asks) {
		return opened{}, errMismatch
	}
	now := s.now()
	exp := time.UnixMilli(c.Exp)
	if !now.Before(exp) {
		return opened{}, errExpired
	}
	nonce := enc.EncodeToString(c.Nonce)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, used := s.spent[nonce]; used {
		return opened{}, errReplayed
	}
	if len(s.spent) >= s.max {
		for n, e := range s.spent {
			if !now.Before(e) {
				delete(s.spent, n)
			}
		}
		if len(s.spent) >= s.max {
			return opened{}, errTooMany
		}
	}
	s.spent[nonce] = exp
	return opened{nonce: nonce, page: c.Page}, nil
}

// stateReason is the reason code a bad state is denied with: an expired
// state is a timeout (the person answered too late, or not at all); any
// other failure is declined, as no valid "yes" was given.
func stateReason(err error) grants.Reason {
	if errors.Is(err, errExpired) {
		return grants.ReasonApprovalTimeout
	}
	return grants.ReasonDeclined
}

func digest(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

// argsDigest is the SHA-256 of the canonical form of a call's arguments
// (toolkit.CanonicalArguments): every argument is bound, they are all the
// model's.
func argsDigest(raw json.RawMessage) []byte {
	return digest(string(toolkit.CanonicalArguments(raw)))
}

// asksDigest binds the exact requests asked about: each request's key and
// the rule that asked, in a stable order.
func asksDigest(asks []grants.Decision) []byte {
	keys := make([]string, len(asks))
	for i, d := range asks {
		keys[i] = d.Request.Key() + "\x01" + d.RuleID + "\x01" + d.Request.Risk.String()
	}
	sort.Strings(keys)
	return digest(strings.Join(keys, "\x02"))
}
