package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

type kind uint8

const (
	kindFree   kind = iota // any JSON; decoded into `any`, so numbers must fit float64
	kindRaw                // kept as raw JSON (only duplicates matter)
	kindObject             // known fields
	kindMap                // free keys, one value shape
	kindArray
	kindInt
	kindUint
	kindFloat
	kindScalar // string or bool
	kindSkip   // syntax only: nothing checked (Members)
)

// Shape is the form the server will decode a JSON value into. Build one with
// Free, Raw, Object, Map, Array or Of; a nil *Shape is Free.
type Shape struct {
	kind   kind
	bits   int
	fields map[string]*Shape
	names  []string // fields' names, sorted, for messages and folding
	extra  *Shape   // object: shape of unknown keys' values; nil refuses them
	elem   *Shape
}

var (
	freeShape = &Shape{kind: kindFree}
	skipShape = &Shape{kind: kindSkip}
)

// Free is any JSON value decoded into `any`: every number must fit a float64.
func Free() *Shape { return freeShape }

// Raw is any JSON value kept as raw bytes.
func Raw() *Shape { return &Shape{kind: kindRaw} }

// Object is an object with known fields. extra is the shape of values under
// other keys; nil refuses other keys (Unknown).
func Object(fields map[string]*Shape, extra *Shape) *Shape {
	s := &Shape{kind: kindObject, fields: fields, extra: extra}
	s.index()
	return s
}

// Map is an object whose keys are data (compared exactly) and whose values
// all have one shape.
func Map(elem *Shape) *Shape { return &Shape{kind: kindMap, elem: elem} }

// Array is an array whose elements have one shape.
func Array(elem *Shape) *Shape { return &Shape{kind: kindArray, elem: elem} }

// With returns a copy of an object shape with fields added or replaced.
func (s *Shape) With(fields map[string]*Shape) *Shape {
	out := &Shape{kind: kindObject, fields: map[string]*Shape{}, extra: s.extra}
	for k, v := range s.fields {
		out.fields[k] = v
	}
	for k, v := range fields {
		out.fields[k] = v
	}
	out.index()
	return out
}

// Fields lists an object shape's known fields.
func (s *Shape) Fields() []string { return s.names }

func (s *Shape) index() {
	s.names = s.names[:0]
	for k := range s.fields {
		s.names = append(s.names, k)
	}
	sort.Strings(s.names)
}

// member is the shape of the value under key in an object of shape s.
func (s *Shape) member(key []byte) (*Shape, *Error) {
	if s == nil {
		return freeShape, nil
	}
	switch s.kind {
	case kindObject:
		if f, ok := s.fields[string(key)]; ok {
			return f, nil
		}
		for _, name := range s.names {
			if bytes.EqualFold(key, []byte(name)) {
				return nil, &Error{Key: string(key), Problem: CaseVariant, Msg: fmt.Sprintf("unknown key; keys are case-sensitive: did you mean %q?", name)}
			}
		}
		if s.extra == nil {
			return nil, &Error{Key: string(key), Problem: Unknown, Msg: "unknown key; accepted: " + strings.Join(s.names, ", ")}
		}
		return s.extra, nil
	case kindMap:
		return s.elem, nil
	case kindRaw, kindSkip:
		return s, nil
	}
	return freeShape, nil // a type mismatch encoding/json reports itself
}

func (s *Shape) element() *Shape {
	switch {
	case s == nil:
		return freeShape
	case s.kind == kindArray:
		return s.elem
	case s.kind == kindRaw || s.kind == kindSkip:
		return s
	}
	return freeShape
}

// fits checks a number literal against the shape it fills, the way
// encoding/json will convert it.
func (s *Shape) fits(lit string) *Error {
	if s == nil {
		s = freeShape
	}
	var err error
	switch {
	case s.kind == kindRaw || s.kind == kindSkip:
		return nil
	case s.kind == kindInt:
		_, err = strconv.ParseInt(lit, 10, s.bits)
	case s.kind == kindUint:
		_, err = strconv.ParseUint(lit, 10, s.bits)
	case s.kind == kindFloat:
		_, err = strconv.ParseFloat(lit, s.bits)
	default: // Free, or a mismatch encoding/json reports: as if decoded into any
		_, err = strconv.ParseFloat(lit, 64)
	}
	if err != nil {
		if len(lit) > 40 {
			lit = lit[:37] + "..."
		}
		return &Error{Problem: Range, Msg: fmt.Sprintf("number %s is out of range: expected %s", lit, s.numberWanted())}
	}
	return nil
}

// fitsShortInteger is a quick yes for the common case: an integer literal
// of at most 15 digits fills an int64 field, a float64 or any exactly.
// false means fits must decide.
func (s *Shape) fitsShortInteger(lit []byte) bool {
	if s == nil {
		s = freeShape
	}
	switch {
	case s.kind == kindInt && s.bits == 64, s.kind == kindFloat && s.bits == 64, s.kind == kindFree:
		return exactInteger(lit, 64)
	}
	return false
}

// numberWanted says what numbers fit the shape.
func (s *Shape) numberWanted() string {
	switch s.kind {
	case kindInt:
		return fmt.Sprintf("an integer from %d to %d", int64(-1)<<(s.bits-1), int64(1)<<(s.bits-1)-1)
	case kindUint:
		return fmt.Sprintf("an integer from 0 to %d", uint64(math.MaxUint64)>>(64-s.bits))
	case kindFloat:
		return fmt.Sprintf("a number within float%d range", s.bits)
	}
	return "a number within float64 range"
}

// appendNumber writes a number literal that fits the shape in canonical
// form: an integer field's literal as it is (-0 as 0: the same integer), a
// raw value's as it is (its reader is unknown), and any other number as
// encoding/json writes the float it decodes the literal into, so every
// reader of the output reads the value the shape's reader read.
func (s *Shape) appendNumber(out, lit []byte) []byte {
	if s == nil {
		s = freeShape
	}
	bits := 64
	switch s.kind {
	case kindRaw, kindSkip:
		return append(out, lit...)
	case kindInt, kindUint:
		if string(lit) == "-0" {
			return append(out, '0')
		}
		return append(out, lit...)
	case kindFloat:
		bits = s.bits
	}
	if exactInteger(lit, bits) {
		return append(out, lit...) // already the float's own shortest form
	}
	f, _ := strconv.ParseFloat(string(lit), bits) // fits checked it
	var v any = f
	if bits == 32 {
		v = float32(f)
	}
	b, err := json.Marshal(v) // the form encoding/json writes that float in
	if err != nil {
		return append(out, lit...) // unreachable: fits refused NaN and infinities
	}
	return append(out, b...)
}

// exactInteger reports whether lit is an integer literal short enough that
// a float of the bits represents it exactly (15 digits for float64, 7 for
// float32), so that the float's shortest form is the literal itself.
func exactInteger(lit []byte, bits int) bool {
	digits := lit
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	limit := 15
	if bits == 32 {
		limit = 7
	}
	if len(digits) == 0 || len(digits) > limit {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Of is the shape encoding/json decodes into for a value of type t: struct
// fields by their JSON names (embedded structs promoted, by encoding/json's
// rules), with unknown keys ignored, or refused when closed. A type with its
// own UnmarshalJSON is Free unless overrides names its shape.
func Of(t reflect.Type, closed bool, overrides map[reflect.Type]*Shape) *Shape {
	b := builder{closed: closed, overrides: overrides, memo: map[reflect.Type]*Shape{}}
	return b.of(t)
}

type builder struct {
	closed    bool
	overrides map[reflect.Type]*Shape
	memo      map[reflect.Type]*Shape
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
)

func (b *builder) of(t reflect.Type) *Shape {
	if s, ok := b.overrides[t]; ok {
		return s
	}
	if s, ok := b.memo[t]; ok {
		return s
	}
	if t == rawMessageType {
		return Raw()
	}
	if t.Kind() != reflect.Pointer && (reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)) {
		return freeShape
	}
	switch t.Kind() {
	case reflect.Pointer:
		return b.of(t.Elem())
	case reflect.Interface:
		return freeShape
	case reflect.Struct:
		s := &Shape{kind: kindObject, fields: map[string]*Shape{}}
		if !b.closed {
			s.extra = freeShape
		}
		b.memo[t] = s // before the fields: types may be recursive
		for name, ft := range jsonFields(t) {
			s.fields[name] = b.of(ft)
		}
		s.index()
		return s
	case reflect.Map:
		return Map(b.of(t.Elem()))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &Shape{kind: kindScalar} // base64 string
		}
		return Array(b.of(t.Elem()))
	case reflect.Array:
		return Array(b.of(t.Elem()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &Shape{kind: kindInt, bits: t.Bits()}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &Shape{kind: kindUint, bits: t.Bits()}
	case reflect.Float32, reflect.Float64:
		return &Shape{kind: kindFloat, bits: t.Bits()}
	}
	return &Shape{kind: kindScalar}
}

// jsonFields are the fields encoding/json decodes a struct's keys into, by
// name: the shallowest wins, then the tagged one; an unresolved tie hides
// the name.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	type cand struct {
		typ    reflect.Type
		depth  int
		tagged bool
	}
	byName := map[string][]cand{}
	var walk func(t reflect.Type, depth int, visited map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, visited map[reflect.Type]bool) {
		if visited[t] {
			return
		}
		visited[t] = true
		defer delete(visited, t)
		for i := range t.NumField() {
			sf := t.Field(i)
			ft := sf.Type
			if sf.Anonymous && ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if !sf.IsExported() && !(sf.Anonymous && ft.Kind() == reflect.Struct) {
				continue
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
				walk(ft, depth+1, visited)
				continue
			}
			if !sf.IsExported() {
				continue
			}
			tagged := name != ""
			if !tagged {
				name = sf.Name
			}
			byName[name] = append(byName[name], cand{sf.Type, depth, tagged})
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	out := map[string]reflect.Type{}
	for name, cs := range byName {
		best := cs[0].depth
		for _, c := range cs {
			best = min(best, c.depth)
		}
		var top []cand
		for _, c := range cs {
			if c.depth == best {
				top = append(top, c)
			}
		}
		if len(top) > 1 {
			var tagged []cand
			for _, c := range top {
				if c.tagged {
					tagged = append(tagged, c)
				}
			}
			top = tagged
		}
		if len(top) == 1 {
			out[name] = top[0].typ
		}
	}
	return out
}

// Skip is any JSON value, checked for syntax only: for a part of a document
// that another Check reads with its own shape.
func Skip() *Shape { return skipShape }

// Field is the shape of an object shape's known field (Free when unknown).
func (s *Shape) Field(name string) *Shape {
	if s != nil {
		if f, ok := s.fields[name]; ok {
			return f
		}
	}
	return freeShape
}

// FromSchema is the shape of a value a JSON schema describes, for the
// schemas the server publishes as tools' input schemas: type object
// (properties known by exact name, additionalProperties false closing it, a
// schema for the values under other keys), array (items), integer (an int64
// field), number (a float64), string, boolean, null; a type list with null
// is its other type. A keyword that changes what is accepted and that
// FromSchema does not read (anyOf, $ref, patternProperties, …) is an error,
// so no schema is read as more lenient than it says; annotations and value
// constraints (description, enum, minimum, …) are left to the decoder.
func FromSchema(schema []byte) (*Shape, error) {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return nil, fmt.Errorf("reading a JSON schema: %w", err)
	}
	return fromSchema(v, "schema")
}

// schemaKeywords are the keywords FromSchema reads or may leave aside.
var schemaKeywords = map[string]bool{
	"type": true, "properties": true, "additionalProperties": true, "items": true,
	"required": true, "description": true, "title": true, "default": true, "examples": true,
	"enum": true, "const": true, "format": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true, "minLength": true,
	"maxLength": true, "pattern": true, "minItems": true, "maxItems": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true, "$schema": true, "$id": true, "$comment": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "contentEncoding": true, "contentMediaType": true,
}

func fromSchema(v any, at string) (*Shape, error) {
	if b, ok := v.(bool); ok && b {
		return freeShape, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a schema is an object or true", at)
	}
	for k := range m {
		if !schemaKeywords[k] {
			return nil, fmt.Errorf("%s: schema keyword %q is not understood", at, k)
		}
	}
	typ, err := schemaType(m["type"], at)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "object":
		props, _ := m["properties"].(map[string]any)
		fields := make(map[string]*Shape, len(props))
		for name, ps := range props {
			if fields[name], err = fromSchema(ps, at+"."+name); err != nil {
				return nil, err
			}
		}
		extra := freeShape // JSON schema's default: other keys hold anything
		switch ap := m["additionalProperties"].(type) {
		case nil:
		case bool:
			if !ap {
				extra = nil
			}
		default:
			if extra, err = fromSchema(ap, at+"{*}"); err != nil {
				return nil, err
			}
		}
		return Object(fields, extra), nil
	case "array":
		items, ok := m["items"]
		if !ok {
			return Array(freeShape), nil
		}
		elem, err := fromSchema(items, at+"[]")
		if err != nil {
			return nil, err
		}
		return Array(elem), nil
	case "integer":
		return &Shape{kind: kindInt, bits: 64}, nil
	case "number":
		return &Shape{kind: kindFloat, bits: 64}, nil
	case "string", "boolean", "null":
		return &Shape{kind: kindScalar}, nil
	}
	return freeShape, nil // no type, or several: anything
}

// schemaType is a schema's one type: "" for none or for several, the type
// beside "null" in a list of two.
func schemaType(t any, at string) (string, error) {
	switch t := t.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case []any:
		var out []string
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return "", fmt.Errorf("%s: type lists names", at)
			}
			if s != "null" {
				out = append(out, s)
			}
		}
		if len(out) == 1 {
			return out[0], nil
		}
		return "", nil
	}
	return "", fmt.Errorf("%s: type is a name or a list of names", at)
}
