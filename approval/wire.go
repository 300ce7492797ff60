package approval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/strictjson"
)

// The inbox protocol: how servers of one user share one console (see
// inbox.go). One message per line, newline-terminated JSON, at most
// maxWireMessage bytes, read strictly (internal/strictjson: no duplicate or
// case-variant keys, no unknown ones) and then checked for what its type
// needs. A message that fails any check ends the connection.
//
//	peer → hub: hello {version, addr, server}   first, once
//	            post {id, ask}                   an ask of the peer's, to list
//	            withdraw {id, outcome, channel}  it is decided or gone there
//	            result {id, ok, outcome}         what became of a forwarded answer
//	hub → peer: welcome {version, addr, token}
//	            answer {id, action, decision | answer}
//	            refused {id, error}              a post the hub will not list
//
// Version 2: a server that takes the console over serves it with fresh
// credentials (inbox.go), so the hub no longer sends its logins; a server
// of version 1 would keep the old token, and is not joined. Version 3: the
// hub no longer sends its CSRF token either. A peer needs only the token
// (to say the login URL to its person); the CSRF token and the login
// cookies are the person's browser's, and no other server is given them.
// A server of version 2 expects a csrf in the welcome, and is not joined.
const wireVersion = 3

// Bounds of the protocol.
const (
	maxWireMessage = 256 << 10
	maxWireItems   = 1024
	maxWireChoices = 256
	maxWireText    = 64 << 10
)

type wireMessage struct {
	Type string `json:"type"`

	Version int    `json:"version,omitempty"`
	Addr    string `json:"addr,omitempty"`
	Server  string `json:"server,omitempty"`
	Token   string `json:"token,omitempty"`

	ID       string   `json:"id,omitempty"`
	Ask      *wireAsk `json:"ask,omitempty"`
	Outcome  string   `json:"outcome,omitempty"`
	Channel  string   `json:"channel,omitempty"`
	OK       bool     `json:"ok,omitempty"`
	Action   string   `json:"action,omitempty"`
	Decision string   `json:"decision,omitempty"`
	Answer   *string  `json:"answer,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// wireAsk is what the hub's page shows of a peer's ask: the peer renders
// (and escapes) it as its own page would; the hub escapes it again, sets
// its own id, time left and server label, and never decides on it.
type wireAsk struct {
	pendingView
	DeadlineMS int64 `json:"deadline_ms"`
}

// wireShape is built on the first message read, not at package init: it
// is reflection over every wire type (~0.05-0.08 ms and 17 KB), and most
// processes (a server without a console, every other subcommand) never
// read one. The shape is a pure function of the types, so building it once
// is not state.
var wireShape = sync.OnceValue(func() *strictjson.Shape {
	return strictjson.Of(reflect.TypeFor[wireMessage](), true, nil)
})

var errWire = errors.New("inbox protocol")

// readWire reads one message. The reader must be a bufio.Reader; a line
// longer than maxWireMessage is an error, not a partial message.
func readWire(r *bufio.Reader) (*wireMessage, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	return parseWire(line)
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > maxWireMessage+1 {
			return nil, fmt.Errorf("%w: a message over %d bytes", errWire, maxWireMessage)
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return nil, fmt.Errorf("%w: a message cut off", errWire)
		default:
			return nil, err
		}
	}
}

// parseWire is the strict reading of one message (without its newline).
func parseWire(line []byte) (*wireMessage, error) {
	if len(line) > maxWireMessage {
		return nil, fmt.Errorf("%w: a message over %d bytes", errWire, maxWireMessage)
	}
	if err := strictjson.Check(line, wireShape()); err != nil {
		return nil, fmt.Errorf("%w: %v", errWire, err)
	}
	var m wireMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", errWire, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errWire, m.Type, err)
	}
	return &m, nil
}

// check refuses what a message of its type must not carry or lacks.
func (m *wireMessage) check() error {
	need := func(ok bool, what string) error {
		if !ok {
			return errors.New(what)
		}
		return nil
	}
	switch m.Type {
	case "hello":
		return need(m.Version == wireVersion && m.Addr != "" && len(m.Server) <= 200, "want version 3, addr and a short server label")
	case "welcome":
		return need(m.Version == wireVersion && m.Addr != "" && idOK(m.Token), "want version 3, addr and token")
	case "post":
		if !idOK(m.ID) || m.Ask == nil {
			return errors.New("want id and ask")
		}
		return m.Ask.check()
	case "withdraw", "result":
		return need(idOK(m.ID) && len(m.Outcome) <= maxWireText && len(m.Channel) <= 40, "want id and a short outcome")
	case "answer":
		switch m.Action {
		case "accept":
			return need(idOK(m.ID) && (m.Decision != "") != (m.Answer != nil) && len(m.Decision) <= 40 && (m.Answer == nil || len(*m.Answer) <= maxAnswerBytes),
				"want id and one of decision or answer")
		case "decline", "cancel":
			return need(idOK(m.ID) && m.Decision == "" && m.Answer == nil, "want id only")
		}
		return errors.New("unknown action")
	case "refused":
		return need(idOK(m.ID) && len(m.Error) <= maxWireText, "want id")
	}
	return errors.New("unknown message type")
}

func (a *wireAsk) check() error {
	if a.Kind != string(kindApproval) && a.Kind != string(kindQuestion) {
		return errors.New("unknown kind")
	}
	if len(a.Items) > maxWireItems || len(a.Choices) > maxWireChoices {
		return errors.New("too many items or choices")
	}
	if a.Kind == string(kindApproval) && len(a.Items) == 0 {
		return errors.New("an approval without items")
	}
	if a.DeadlineMS <= 0 {
		return errors.New("want deadline_ms")
	}
	if _, ok := grants.ParseRisk(a.Level); a.Level != "" && !ok {
		return errors.New("unknown risk level") // it names the card's style
	}
	return nil
}

// idOK: every id on the wire is one of ours (randomID: 22 base64url
// characters); anything else is refused before it is looked up.
func idOK(s string) bool {
	if len(s) != 22 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// encodeWire is one message as a line.
func encodeWire(m *wireMessage) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(b) > maxWireMessage {
		return nil, fmt.Errorf("%w: a %s message of %d bytes is too long", errWire, m.Type, len(b))
	}
	return append(b, '\n'), nil
}
