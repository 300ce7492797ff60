// Package strictjson owns the one strict reading of JSON input that the
// server applies at every door: JSON-RPC messages on both transports and the
// arguments of every tool call.
//
// Security model: encoding/json, which mcp-go and the tools decode with,
// resolves ambiguity silently. It takes the last of two duplicate keys, and
// it matches a key to a struct field case-insensitively (with Unicode simple
// folding, so "ſ" matches "s" and "K" matches "k"). Two readers of the same
// message, or a reader and a person reviewing it, can therefore disagree on
// what it says: {"name":"read_file","Name":"execute_terminal_command"}
// routes to the second tool. Check walks a document once, against the Shape
// of what the server will decode it into, and refuses every such ambiguity
// before anything is decoded, decided or run:
//
//   - a duplicate key in any object, at any depth (keys compared after
//     unescaping, as encoding/json compares them);
//   - a key that matches a known field only case-insensitively;
//   - an unknown key, where the shape is closed;
//   - a number that does not fit the field it fills (an integer field given
//     1.5 or 1e400, any number beyond float64);
//   - nesting deeper than MaxDepth, and anything that is not one JSON value.
//
// After Check accepts a document, every lenient decoder reads it the same
// way. Canonical goes one step further: it returns the document as that one
// reading writes it (no whitespace, each key and string in one spelling,
// each number in the form its field reads), so a server can hand on only
// bytes it produced from its own parse, which no reader can take two ways.
//
// Not covered: type mismatches that encoding/json itself reports (a string
// for an integer), and the meaning of values.
package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of objects and arrays accepted.
const MaxDepth = 512

// Problem is what is wrong with a document.
type Problem int

// The problems Check reports.
const (
	Syntax Problem = iota
	Duplicate
	CaseVariant
	Unknown
	Range
	TooDeep
)

// Error is the first problem found, and where.
type Error struct {
	// Path leads from the document's root to the object holding Key (or to
	// the value at fault): object keys, and array indexes as "[i]".
	Path    []string
	Key     string
	Problem Problem
	Msg     string
}

func (e *Error) Error() string {
	if where := e.Where(0); where != "" {
		return fmt.Sprintf("%s: %s", where, e.Msg)
	}
	return e.Msg
}

// Where names the key or value at fault as a dotted path ("edits[0].path"),
// leaving out the first skip elements of Path.
func (e *Error) Where(skip int) string {
	var parts []string
	if skip < len(e.Path) {
		parts = append(parts, e.Path[skip:]...)
	}
	if e.Key != "" {
		parts = append(parts, e.Key)
	}
	return strings.ReplaceAll(strings.Join(parts, "."), ".[", "[")
}

// In reports whether the problem lies at or below the path.
func (e *Error) In(path ...string) bool {
	if len(e.Path) < len(path) {
		return false
	}
	for i, p := range path {
		if e.Path[i] != p {
			return false
		}
	}
	return true
}

// Check reads data as exactly one JSON value of the given shape and returns
// the first *Error found, or nil.
func Check(data []byte, s *Shape) error {
	var keys [16][]byte
	w := walker{data: data, keys: keys[:0]}
	if err := w.document(s); err != nil {
		return err
	}
	return nil
}

// Canonical checks data as Check does and returns the canonical encoding
// of the one value it reads: no insignificant whitespace; keys and strings
// unescaped and written with only the escapes JSON requires (", \ and
// control characters), invalid UTF-8 as U+FFFD, as encoding/json reads it;
// integers of integer fields as they are (-0 as 0); any other number as the
// shortest form of the float64 (float32 for such a field) encoding/json
// decodes, the form encoding/json writes; members and elements in their
// order. Raw values keep their numbers as written. Canonical of its own
// output returns the same bytes.
func Canonical(data []byte, s *Shape) ([]byte, error) {
	var keys [16][]byte
	w := walker{data: data, keys: keys[:0], emit: true, out: make([]byte, 0, len(data))}
	if err := w.document(s); err != nil {
		return nil, err
	}
	return w.out, nil
}

type walker struct {
	data []byte
	pos  int
	keys [][]byte // keys of the objects being walked, innermost last
	// emit: out receives the canonical encoding of what is walked.
	emit bool
	out  []byte
}

func (w *walker) document(s *Shape) *Error {
	w.space()
	if err := w.value(s, 0); err != nil {
		return err
	}
	w.space()
	if w.pos != len(w.data) {
		return w.syntax("unexpected data after the JSON value")
	}
	return nil
}

func (w *walker) syntax(msg string) *Error {
	return &Error{Problem: Syntax, Msg: fmt.Sprintf("not valid JSON at byte %d: %s", w.pos, msg)}
}

func (w *walker) space() {
	i := w.pos
	for i < len(w.data) {
		switch w.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			w.pos = i
			return
		}
	}
	w.pos = i
}

func (w *walker) value(s *Shape, depth int) *Error {
	if w.pos >= len(w.data) {
		return w.syntax("unexpected end of input")
	}
	switch c := w.data[w.pos]; {
	case c == '{':
		return w.object(s, depth+1)
	case c == '[':
		return w.array(s, depth+1)
	case c == '"':
		raw, plain, err := w.str()
		if err == nil && w.emit {
			w.out = appendString(w.out, raw, plain)
		}
		return err
	case c == 't':
		return w.literal("true")
	case c == 'f':
		return w.literal("false")
	case c == 'n':
		return w.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return w.number(s)
	}
	return w.syntax(fmt.Sprintf("unexpected character %q", w.data[w.pos]))
}

func (w *walker) literal(lit string) *Error {
	if len(w.data)-w.pos < len(lit) || string(w.data[w.pos:w.pos+len(lit)]) != lit {
		return w.syntax("invalid literal")
	}
	w.pos += len(lit)
	if w.emit {
		w.out = append(w.out, lit...)
	}
	return nil
}

func (w *walker) object(s *Shape, depth int) *Error {
	if depth > MaxDepth {
		return &Error{Problem: TooDeep, Msg: fmt.Sprintf("nested deeper than %d levels", MaxDepth)}
	}
	w.pos++ // {
	first := len(w.keys)
	defer w.popKeys(first)
	var seen map[string]struct{} // for large objects only
	w.space()
	w.bracket('{')
	if w.pos < len(w.data) && w.data[w.pos] == '}' {
		w.pos++
		w.bracket('}')
		return nil
	}
	for n := 0; ; n++ {
		if w.emit && n > 0 {
			w.out = append(w.out, ',')
		}
		key, err := w.key()
		if err != nil {
			return err
		}
		if s == nil || s.kind != kindSkip || w.emit {
			if err := w.unique(key, first, &seen); err != nil {
				return err
			}
		}
		child, err := s.member(key)
		if err != nil {
			return err
		}
		if err := w.value(child, depth); err != nil {
			err.Path = append([]string{string(key)}, err.Path...)
			return err
		}
		if more, err := w.more('}'); !more || err != nil {
			return err
		}
	}
}

// bracket writes an object's or an array's opening or closing bracket
// when emitting.
func (w *walker) bracket(c byte) {
	if w.emit {
		w.out = append(w.out, c)
	}
}

// key reads an object member's key and the colon after it.
func (w *walker) key() ([]byte, *Error) {
	w.space()
	if w.pos >= len(w.data) || w.data[w.pos] != '"' {
		return nil, w.syntax("expected a string key")
	}
	raw, plain, err := w.str()
	if err != nil {
		return nil, err
	}
	w.space()
	if w.pos >= len(w.data) || w.data[w.pos] != ':' {
		return nil, w.syntax("expected ':' after a key")
	}
	w.pos++
	w.space()
	key := keyBytes(raw, plain)
	if w.emit {
		w.out = appendString(w.out, raw, plain)
		w.out = append(w.out, ':')
	}
	return key, nil
}

// more reads what follows a member or an element: true after a comma,
// false after the closer.
func (w *walker) more(closer byte) (bool, *Error) {
	w.space()
	if w.pos >= len(w.data) {
		return false, w.syntax("unexpected end of input")
	}
	switch w.data[w.pos] {
	case ',':
		w.pos++
		return true, nil
	case closer:
		w.pos++
		w.bracket(closer)
		return false, nil
	}
	return false, w.syntax(fmt.Sprintf("expected ',' or '%c'", closer))
}

func (w *walker) popKeys(first int) { w.keys = w.keys[:first] }

// unique records key among the current object's keys and refuses a repeat.
func (w *walker) unique(key []byte, first int, seen *map[string]struct{}) *Error {
	if *seen != nil {
		if _, ok := (*seen)[string(key)]; ok {
			return duplicate(key)
		}
		(*seen)[string(key)] = struct{}{}
		return nil
	}
	for _, k := range w.keys[first:] {
		if string(k) == string(key) {
			return duplicate(key)
		}
	}
	w.keys = append(w.keys, key)
	if len(w.keys)-first > 16 {
		*seen = make(map[string]struct{}, 32)
		for _, k := range w.keys[first:] {
			(*seen)[string(k)] = struct{}{}
		}
	}
	return nil
}

func duplicate(key []byte) *Error {
	return &Error{Key: string(key), Problem: Duplicate, Msg: "duplicate key; a key may appear only once"}
}

func (w *walker) array(s *Shape, depth int) *Error {
	if depth > MaxDepth {
		return &Error{Problem: TooDeep, Msg: fmt.Sprintf("nested deeper than %d levels", MaxDepth)}
	}
	w.pos++ // [
	elem := s.element()
	w.space()
	w.bracket('[')
	if w.pos < len(w.data) && w.data[w.pos] == ']' {
		w.pos++
		w.bracket(']')
		return nil
	}
	for i := 0; ; i++ {
		if w.emit && i > 0 {
			w.out = append(w.out, ',')
		}
		w.space()
		if err := w.value(elem, depth); err != nil {
			err.Path = append([]string{"[" + strconv.Itoa(i) + "]"}, err.Path...)
			return err
		}
		if more, err := w.more(']'); !more || err != nil {
			return err
		}
	}
}

// str scans a string and returns its raw bytes (quotes included) and
// whether it is plain: no escapes, valid UTF-8, so its value is the bytes
// between the quotes.
// plainByte[c] is 1 for a byte a string holds as it is: printable ASCII
// other than " and \\ (a constant, so str's scan is one load per byte).
const plainByte = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x01\x01\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" +
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x01\x01\x01" +
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

func (w *walker) str() ([]byte, bool, *Error) {
	// The scan keeps its position in a local (the walker's field is
	// written back on return): every message's strings pass here, and a
	// field written per byte costs several times the comparisons.
	data, start := w.data, w.pos
	i, plain := start+1, true // after the "
	for i < len(data) {
		c := data[i]
		if plainByte[c] == 1 {
			i++
			continue
		}
		switch {
		case c == '"':
			w.pos = i + 1
			return data[start:w.pos], plain, nil
		case c == '\\':
			plain = false
			w.pos = i
			if i+1 >= len(data) {
				return nil, false, w.syntax("unterminated escape")
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || !isHex4(data[i+2:i+6]) {
					return nil, false, w.syntax("invalid \\u escape")
				}
				i += 6
			default:
				return nil, false, w.syntax("invalid escape")
			}
		case c < 0x20:
			w.pos = i
			return nil, false, w.syntax("control character in a string")
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n == 1 {
				plain = false // encoding/json replaces it with U+FFFD
			}
			i += n
		}
	}
	w.pos = i
	return nil, false, w.syntax("unterminated string")
}

// appendString writes a scanned string (raw, quotes included) canonically:
// a plain one as it is, any other unescaped (as keyBytes reads it) and
// escaped again with the fewest escapes.
func appendString(out, raw []byte, plain bool) []byte {
	if plain {
		return append(out, raw...)
	}
	v := keyBytes(raw, false)
	out = append(out, '"')
	for _, c := range v {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\r':
			out = append(out, '\\', 'r')
		case c == '\t':
			out = append(out, '\\', 't')
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

const hexDigits = "0123456789abcdef"

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// keyBytes is the key as encoding/json reads it: the bytes between the
// quotes when plain, else the unescaped (and U+FFFD-repaired) string.
func keyBytes(raw []byte, plain bool) []byte {
	if plain {
		return raw[1 : len(raw)-1]
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return raw // unreachable: str validated it
	}
	return []byte(s)
}

func (w *walker) number(s *Shape) *Error {
	start := w.pos
	if w.data[w.pos] == '-' {
		w.pos++
	}
	switch {
	case w.pos < len(w.data) && w.data[w.pos] == '0':
		w.pos++
	case w.pos < len(w.data) && w.data[w.pos] >= '1' && w.data[w.pos] <= '9':
		w.digits()
	default:
		return w.syntax("invalid number")
	}
	if w.pos < len(w.data) && w.data[w.pos] == '.' {
		w.pos++
		if !w.digits() {
			return w.syntax("invalid number")
		}
	}
	if w.pos < len(w.data) && (w.data[w.pos] == 'e' || w.data[w.pos] == 'E') {
		w.pos++
		if w.pos < len(w.data) && (w.data[w.pos] == '+' || w.data[w.pos] == '-') {
			w.pos++
		}
		if !w.digits() {
			return w.syntax("invalid number")
		}
	}
	lit := w.data[start:w.pos]
	if !s.fitsShortInteger(lit) {
		if err := s.fits(string(lit)); err != nil {
			return err
		}
	}
	if w.emit {
		w.out = s.appendNumber(w.out, lit)
	}
	return nil
}

func (w *walker) digits() bool {
	start, i := w.pos, w.pos
	for i < len(w.data) && w.data[i] >= '0' && w.data[i] <= '9' {
		i++
	}
	w.pos = i
	return i > start
}

// Members calls fn with each key of a top-level object, in order, until fn
// returns false; value scans and returns the key's raw value, and is valid
// only during the call. Members checks nothing beyond the syntax it reads:
// it is for peeking (a message's method and id) before Check, or at
// messages the server itself wrote, and it reads no further than it must
// (a cut-off prefix of a message still yields its first keys).
func Members(data []byte, fn func(key []byte, value func() ([]byte, error)) bool) error {
	m := &members{w: walker{data: data}} // one allocation: fn may keep value
	w := &m.w
	w.space()
	if w.pos >= len(w.data) || w.data[w.pos] != '{' {
		return w.syntax("expected an object")
	}
	w.pos++
	w.space()
	if w.pos < len(w.data) && w.data[w.pos] == '}' {
		return nil
	}
	value := m.value
	for {
		key, err := w.key()
		if err != nil {
			return err
		}
		m.start, m.scanned, m.err = w.pos, false, nil
		if !fn(key, value) {
			return nil
		}
		if _, err := value(); err != nil {
			return err
		}
		if more, err := w.more('}'); !more || err != nil {
			return err
		}
	}
}

// members is the state of one Members walk.
type members struct {
	w       walker
	start   int // where the current member's value starts
	scanned bool
	err     *Error
}

// value scans the current member's value (once) and returns its raw bytes.
func (m *members) value() ([]byte, error) {
	if !m.scanned {
		m.scanned = true
		m.err = m.w.value(skipShape, 1)
	}
	if m.err != nil {
		return nil, m.err
	}
	return m.w.data[m.start:m.w.pos], nil
}

// String is the value of a raw JSON string as encoding/json reads it.
func String(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && !bytes.ContainsAny(raw[1:len(raw)-1], "\\\"") && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}
