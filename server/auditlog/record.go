package auditlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// DefaultMaxRecordBytes bounds one record unless the config says otherwise.
const DefaultMaxRecordBytes = 4 << 10

// chainPrefixMax is the most bytes `{"seq":N,"prev":"…",` takes.
const chainPrefixMax = len(`{"seq":18446744073709551615,"prev":"`) + 64 + len(`",`)

// keptPrefix is how much of a shortened string field is kept at least.
const keptPrefix = 64

var zeroHash [32]byte

// rangeFactory builds RFC 6962 compact ranges.
var rangeFactory = &compact.RangeFactory{Hash: hashChildren}

// leafHash is a record's Merkle leaf hash, SHA-256(0x00 || line) as
// rfc6962.DefaultHasher.HashLeaf, without its allocations (every record
// is hashed by every writer on the file; TestHashesAreRFC6962).
func leafHash(line []byte) []byte {
	d := sha256.New()
	d.Write([]byte{rfc6962.RFC6962LeafHashPrefix})
	d.Write(line)
	return d.Sum(make([]byte, 0, sha256.Size))
}

// hashChildren is an interior node's hash, SHA-256(0x01 || left || right)
// as rfc6962.DefaultHasher.HashChildren, hashed from the stack.
func hashChildren(left, right []byte) []byte {
	var b [1 + 2*sha256.Size]byte
	b[0] = rfc6962.RFC6962NodeHashPrefix
	copy(b[1:], left)
	copy(b[1+sha256.Size:], right)
	sum := sha256.Sum256(b[:])
	return sum[:]
}

// head is where the chain stands: the next record's seq, the hash of the
// last record, and the tree over every record so far.
type head struct {
	seq  uint64
	prev [32]byte
	tree *compact.Range // [0, seq)
}

func newHead() head { return head{tree: rangeFactory.NewEmptyRange(0)} }

// cloneRange copies a compact range, so appending to the copy leaves r as
// it was.
func cloneRange(r *compact.Range) *compact.Range {
	c, err := rangeFactory.NewRange(r.Begin(), r.End(), slices.Clone(r.Hashes()))
	if err != nil {
		panic("bug: a valid range does not copy: " + err.Error())
	}
	return c
}

// chain makes the line for body (a JSON object) at seq after prev.
func chain(seq uint64, prev [32]byte, body []byte) []byte {
	return appendChained(make([]byte, 0, len(body)+chainPrefixMax), seq, prev, body)
}

// appendChained appends the line for body at seq after prev to line.
func appendChained(line []byte, seq uint64, prev [32]byte, body []byte) []byte {
	line = append(line, `{"seq":`...)
	line = strconv.AppendUint(line, seq, 10)
	line = append(line, `,"prev":"`...)
	line = hex.AppendEncode(line, prev[:])
	line = append(line, '"')
	if rest := body[1:]; len(bytes.TrimSpace(rest)) > 1 {
		line = append(line, ',')
		line = append(line, rest...)
	} else {
		line = append(line, '}')
	}
	return line
}

// chainFields are the fields every record starts with, and those a
// checkpoint adds.
type chainFields struct {
	Seq        *uint64  `json:"seq"`
	Time       string   `json:"time"`
	Event      string   `json:"event"`
	TreeSize   *uint64  `json:"tree_size"`
	Checkpoint string   `json:"checkpoint"`
	Range      []string `json:"range"`
	prev       []byte   // hex, a slice of the line
}

// parseChain decodes the chain fields of one line: the record must start
// with {"seq":N,"prev":"<64 hex>" exactly as written, and be JSON. Only a
// line that may be a checkpoint is decoded in full.
func parseChain(line []byte) (chainFields, error) {
	var c chainFields
	seq, prev, ok := chainPrefix(line)
	if !ok {
		if len(line) > 0 && line[0] == '{' && validJSON(line) {
			return c, fmt.Errorf("no seq and prev at its start: not a chained record")
		}
		return c, fmt.Errorf("not a JSON record")
	}
	if bytes.Contains(line, []byte(`"checkpoint"`)) {
		if err := json.Unmarshal(line, &c); err != nil {
			return c, fmt.Errorf("not a JSON record: %v", err)
		}
		if c.Seq == nil || *c.Seq != seq {
			return c, fmt.Errorf("seq appears twice")
		}
	} else if !validJSON(line) {
		return c, fmt.Errorf("not a JSON record")
	}
	c.Seq, c.prev = &seq, prev
	return c, nil
}

// chainPrefix reads {"seq":N,"prev":"<64 hex>" at the start of line.
func chainPrefix(line []byte) (seq uint64, prev []byte, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !ok {
		return 0, nil, false
	}
	i := 0
	for i < len(rest) && i < 20 && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || (i > 1 && rest[0] == '0') {
		return 0, nil, false
	}
	seq, err := strconv.ParseUint(string(rest[:i]), 10, 64)
	if err != nil {
		return 0, nil, false
	}
	rest, ok = bytes.CutPrefix(rest[i:], []byte(`,"prev":"`))
	if !ok || len(rest) < 65 || rest[64] != '"' {
		return 0, nil, false
	}
	for _, b := range rest[:64] {
		if !('0' <= b && b <= '9' || 'a' <= b && b <= 'f') {
			return 0, nil, false
		}
	}
	return seq, rest[:64], true
}

// isCheckpoint reports whether the decoded record is a checkpoint.
func (c chainFields) isCheckpoint() bool { return c.Event == "checkpoint" }

// treeRange rebuilds the compact range a checkpoint record carries.
func (c chainFields) treeRange() (*compact.Range, error) {
	if c.TreeSize == nil || *c.TreeSize != *c.Seq {
		return nil, fmt.Errorf("checkpoint tree_size is not its seq")
	}
	hashes := make([][]byte, len(c.Range))
	for i, h := range c.Range {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != 32 {
			return nil, fmt.Errorf("checkpoint range hash %d is not a SHA-256", i)
		}
		hashes[i] = b
	}
	r, err := rangeFactory.NewRange(0, *c.Seq, hashes)
	if err != nil {
		return nil, fmt.Errorf("checkpoint range: %v", err)
	}
	return r, nil
}

// bound returns body (a JSON object) cut to at most limit bytes: while it is
// too long, its longest string field keeps a prefix, its length and its
// SHA-256. A body that cannot be cut enough is an error.
func bound(body []byte, limit int) ([]byte, error) {
	if len(body) <= limit {
		return body, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("audit record: %v", err)
	}
	fields := stringFields(&v)
	orig := make([]string, len(fields))
	keep := make([]int, len(fields)) // -1: whole
	for i, f := range fields {
		orig[i], keep[i] = f.get(), -1
	}
	for len(body) > limit {
		// The longest field that can still give bytes.
		pick := -1
		for i, f := range fields {
			if keep[i] != keptPrefix && len(orig[i]) > keptPrefix+markerMax && (pick < 0 || len(f.get()) > len(fields[pick].get())) {
				pick = i
			}
		}
		if pick < 0 {
			return nil, fmt.Errorf("audit record of %d bytes cannot be cut below %d bytes", len(body), limit)
		}
		cur := keep[pick]
		if cur < 0 {
			cur = len(orig[pick]) - markerMax
		}
		keep[pick] = max(keptPrefix, cur-(len(body)-limit))
		fields[pick].set(shorten(orig[pick], keep[pick]))
		var err error
		if body, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("audit record: %v", err)
		}
	}
	return body, nil
}

// markerMax is the most bytes shorten adds after the prefix.
const markerMax = len("…[18446744073709551615 bytes, sha256:]") + 64

// shorten keeps the first keep bytes of s (whole runes) with its length and
// hash, so the original can still be matched against.
func shorten(s string, keep int) string {
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%s…[%d bytes, sha256:%x]", s[:keep], len(s), sum)
}

// stringField is one string value inside a decoded JSON document.
type stringField struct {
	get func() string
	set func(string)
}

func stringFields(v *any) []stringField {
	var out []stringField
	switch x := (*v).(type) {
	case string:
		out = append(out, stringField{get: func() string { return (*v).(string) }, set: func(s string) { *v = s }})
	case map[string]any:
		for k := range x {
			e := x[k]
			for _, f := range stringFields(&e) {
				out = append(out, stringField{get: f.get, set: func(s string) { f.set(s); x[k] = e }})
			}
		}
	case []any:
		for i := range x {
			out = append(out, stringFields(&x[i])...)
		}
	}
	return out
}

// emptyRoot is the RFC 6962 root of the empty tree.
func emptyRoot() []byte { return rfc6962.DefaultHasher.EmptyRoot() }
