package strictjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type edit struct {
	Path    string `json:"path"`
	OldText string `json:"old_text"`
}

type args struct {
	Path    string            `json:"path"`
	Offset  int               `json:"offset,omitempty"`
	Small   int8              `json:"small,omitempty"`
	Count   uint32            `json:"count,omitempty"`
	Ratio   float32           `json:"ratio,omitempty"`
	Edits   []edit            `json:"edits,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Any     any               `json:"any,omitempty"`
	Raw     json.RawMessage   `json:"raw,omitempty"`
}

type inner struct {
	Name string `json:"name"`
	Deep string `json:"deep"`
}

type outer struct {
	inner        // promoted: name, deep
	Name  string `json:"name"` // shallower: wins over inner.Name
	Plain string // no tag: the Go name is the JSON name
}

func TestCheck(t *testing.T) {
	closed := Of(reflect.TypeFor[args](), true, nil)
	open := Of(reflect.TypeFor[args](), false, nil)
	for _, tc := range []struct {
		name    string
		shape   *Shape
		doc     string
		problem Problem // -1: accepted
		where   string
	}{
		{"plain", closed, `{"path":"a.txt","offset":3}`, -1, ""},
		{"empty object", closed, `{}`, -1, ""},
		{"whitespace around", closed, " \r\n\t{\"path\" : \"a\" }\n", -1, ""},
		{"escaped key is the same key", closed, `{"p\u0061th":"a"}`, -1, ""},
		{"upper case", closed, `{"PATH":"a"}`, CaseVariant, "PATH"},
		{"title case", closed, `{"Path":"a"}`, CaseVariant, "Path"},
		{"case variant beside the real key", closed, `{"path":"a","Path":"b"}`, CaseVariant, "Path"},
		{"long s folds to s", closed, `{"edits":[{"path":"a","old_text":"x"}],"Headerſ":{}}`, CaseVariant, "Headerſ"},
		{"kelvin sign folds to k", Object(map[string]*Shape{"kind": Free()}, nil), "{\"\u212aind\":1}", CaseVariant, "\u212aind"},
		{"case variant when open", open, `{"OFFSET":1}`, CaseVariant, "OFFSET"},
		{"unknown when closed", closed, `{"mode":1}`, Unknown, "mode"},
		{"unknown when open", open, `{"mode":{"a":1}}`, -1, ""},
		{"duplicate", closed, `{"path":"a","path":"b"}`, Duplicate, "path"},
		{"duplicate through an escape", closed, `{"path":"a","pat\u0068":"b"}`, Duplicate, "path"},
		{"duplicate invalid UTF-8 keys fold to U+FFFD", open, "{\"x\":{\"\xff\":1,\"\xfe\":2}}", Duplicate, "x.\ufffd"},
		{"duplicate nested in an array", closed, `{"edits":[{"path":"a"},{"path":"b","path":"c"}]}`, Duplicate, "edits[1].path"},
		{"case variant nested in an array", closed, `{"edits":[{"Path":"a"}]}`, CaseVariant, "edits[0].Path"},
		{"map keys are data", closed, `{"headers":{"Path":"x","path":"y"}}`, -1, ""},
		{"duplicate map key", closed, `{"headers":{"X-A":"1","X-A":"2"}}`, Duplicate, "headers.X-A"},
		{"duplicate in free data", closed, `{"any":[{"k":1,"k":2}]}`, Duplicate, "any[0].k"},
		{"duplicate in raw data", closed, `{"raw":{"k":1,"k":2}}`, Duplicate, "raw.k"},
		{"many keys then a duplicate", open, `{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1,"m":1,"n":1,"o":1,"p":1,"q":1,"r":1,"a":2}`, Duplicate, "a"},
		{"int", closed, `{"offset":-9223372036854775808}`, -1, ""},
		{"int overflow", closed, `{"offset":9223372036854775808}`, Range, "offset"},
		{"int fraction", closed, `{"offset":1.5}`, Range, "offset"},
		{"int exponent", closed, `{"offset":1e400}`, Range, "offset"},
		{"int8 overflow", closed, `{"small":128}`, Range, "small"},
		{"uint negative", closed, `{"count":-1}`, Range, "count"},
		{"uint32 overflow", closed, `{"count":4294967296}`, Range, "count"},
		{"float32 overflow", closed, `{"ratio":1e39}`, Range, "ratio"},
		{"float32 underflow is fine", closed, `{"ratio":1e-60}`, -1, ""},
		{"free number beyond float64", closed, `{"any":{"n":-1e400}}`, Range, "any.n"},
		{"raw number beyond float64", closed, `{"raw":1e400}`, -1, ""},
		{"type mismatch is left to encoding/json", closed, `{"offset":"3","path":{"a":1}}`, -1, ""},
		{"promoted and shadowed fields", Of(reflect.TypeFor[outer](), true, nil), `{"name":"a","deep":"b","Plain":"c"}`, -1, ""},
		{"untagged name is case-sensitive too", Of(reflect.TypeFor[outer](), true, nil), `{"plain":"c"}`, CaseVariant, "plain"},
		{"trailing data", closed, `{"path":"a"} {}`, Syntax, ""},
		{"trailing comma", closed, `{"path":"a",}`, Syntax, ""},
		{"bad escape", closed, `{"path":"\x"}`, Syntax, ""},
		{"control character", closed, "{\"path\":\"a\x01\"}", Syntax, ""},
		{"leading zero", closed, `{"offset":01}`, Syntax, ""},
		{"bare word", closed, `{"offset":nul}`, Syntax, ""},
		{"empty", closed, ``, Syntax, ""},
		{"too deep", Free(), strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), TooDeep, ""},
		{"deep enough", Free(), strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.doc), tc.shape)
			if tc.problem < 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			se, ok := err.(*Error)
			if !ok {
				t.Fatalf("accepted (%v), want problem %d at %q", err, tc.problem, tc.where)
			}
			if se.Problem != tc.problem {
				t.Errorf("problem %d (%v), want %d", se.Problem, se, tc.problem)
			}
			if tc.problem != Syntax && tc.problem != TooDeep && se.Where(0) != tc.where {
				t.Errorf("at %q, want %q (%v)", se.Where(0), tc.where, se)
			}
		})
	}
}

// What Check accepts, encoding/json reads into the same value whether it is
// told about duplicates or not, and reads at all; its canonical encoding is
// accepted too, is its own canonical encoding, and reads as the same value
// (into any for the free shape; into the shape's type).
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		`{"path":"a","offset":1}`, `{"path":"a","Path":"b"}`, `{"a":1,"a":2}`, `{"offset":1e400}`,
		`{"edits":[{"path":"x","old_text":"y"}]}`, `{"headers":{"A":"1"}}`, `[1,{"x":[true,null]}]`,
		`{"p\u0061th":"a","path":"b"}`, `"\ud800"`, `-0.0e+1`, `{"any":{"\u017f":1,"s":2}}`,
	} {
		f.Add([]byte(seed))
	}
	shape := Of(reflect.TypeFor[args](), true, nil)
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, s := range []*Shape{Free(), shape} {
			if Check(doc, s) != nil {
				continue
			}
			if !json.Valid(doc) {
				t.Fatalf("accepted invalid JSON %q", doc)
			}
			var v any
			if err := json.Unmarshal(doc, &v); err != nil {
				t.Fatalf("accepted %q, which encoding/json cannot read: %v", doc, err)
			}
			if dupes(t, doc) {
				t.Fatalf("accepted %q, which has a duplicate key", doc)
			}
			canonical, err := Canonical(doc, s)
			if err != nil {
				t.Fatalf("Check accepted %q, Canonical refused it: %v", doc, err)
			}
			if again, err := Canonical(canonical, s); err != nil || !bytes.Equal(again, canonical) {
				t.Fatalf("canonical %q of %q is not a fixed point: %q, %v", canonical, doc, again, err)
			}
			// Into any, for the free shape (a float32 field's canonical form
			// is what a float32 reads, which the typed decode below checks).
			var cv any
			if err := json.Unmarshal(canonical, &cv); err != nil || s == Free() && !reflect.DeepEqual(v, cv) {
				t.Fatalf("%q and its canonical %q read differently: %v / %v (%v)", doc, canonical, v, cv, err)
			}
			if s == shape {
				var a, ca args
				if json.Unmarshal(doc, &a) == nil && (json.Unmarshal(canonical, &ca) != nil || !sameArgs(a, ca)) {
					t.Fatalf("%q and its canonical %q decode differently: %+v / %+v", doc, canonical, a, ca)
				}
				dec := json.NewDecoder(bytes.NewReader(doc))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&a); err != nil && !strings.Contains(err.Error(), "cannot unmarshal") {
					t.Fatalf("accepted %q, refused by a strict decode: %v", doc, err)
				}
			}
		}
	})
}

// sameArgs compares two decoded args, their raw member by meaning (the
// canonical form is another spelling of it, with its numbers as written).
func sameArgs(a, b args) bool {
	if len(a.Raw) > 0 || len(b.Raw) > 0 {
		ra, erra := numbers(a.Raw)
		rb, errb := numbers(b.Raw)
		if erra != nil || errb != nil || !reflect.DeepEqual(ra, rb) {
			return false
		}
	}
	a.Raw, b.Raw = nil, nil
	return reflect.DeepEqual(a, b)
}

// numbers decodes raw JSON with its numbers kept as written.
func numbers(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// dupes reports whether any object in doc repeats a key, by encoding/json's
// own tokenizer.
func dupes(t *testing.T, doc []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isKey := top != nil && top.obj && top.key
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: true, keys: map[string]bool{}, key: true})
				continue
			case '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].key = true
				}
				continue
			}
		case string:
			if isKey {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}

func BenchmarkCheckTypicalCall(b *testing.B) {
	shape := Of(reflect.TypeFor[args](), true, nil)
	doc := []byte(`{"path":"src/main.go","offset":10,"edits":[{"path":"a.go","old_text":"x := 1"}]}`)
	for b.Loop() {
		if err := Check(doc, shape); err != nil {
			b.Fatal(err)
		}
	}
}

// Canonical writes the one reading of a document in one spelling.
func TestCanonical(t *testing.T) {
	closed := Of(reflect.TypeFor[args](), true, nil)
	for _, tc := range []struct {
		name  string
		shape *Shape
		doc   string
		want  string
	}{
		{"already canonical", closed, `{"path":"a","offset":3}`, `{"path":"a","offset":3}`},
		{"whitespace", closed, " {\n\t\"path\" : \"a\" ,\r\n \"edits\" : [ { \"path\" : \"b\" } , { } ] } ", `{"path":"a","edits":[{"path":"b"},{}]}`},
		{"escaped key", closed, `{"p\u0061th":"a"}`, `{"path":"a"}`},
		{"escaped string", closed, `{"path":"\u0061\/b\u00e9\t\"\\\u0001"}`, `{"path":"a/bé\t\"\\\u0001"}`},
		{"surrogate pair", closed, `{"path":"\ud83d\ude00"}`, `{"path":"😀"}`},
		{"lone surrogate reads as U+FFFD", closed, `{"path":"\ud800"}`, "{\"path\":\"\ufffd\"}"},
		{"invalid UTF-8 reads as U+FFFD", closed, "{\"path\":\"a\xffb\"}", "{\"path\":\"a\ufffdb\"}"},
		{"invalid UTF-8 key", Free(), "{\"\xfe\":1}", "{\"\ufffd\":1}"},
		{"integer field keeps its digits", closed, `{"offset":9007199254740993}`, `{"offset":9007199254740993}`},
		{"integer field minus zero", closed, `{"offset":-0}`, `{"offset":0}`},
		{"free number as its float", closed, `{"any":{"a":1.0,"b":1e2,"c":-0.0,"d":1.5E+1,"e":9007199254740993,"f":1e21,"g":0.000001,"h":1e-7}}`,
			`{"any":{"a":1,"b":100,"c":-0,"d":15,"e":9007199254740992,"f":1e+21,"g":0.000001,"h":1e-7}}`},
		{"float32 field", closed, `{"ratio":0.1000000001}`, `{"ratio":0.1}`},
		{"raw keeps numbers as written", closed, `{"raw":{"n":1.50,"big":1e400}}`, `{"raw":{"n":1.50,"big":1e400}}`},
		{"map keys are kept", closed, `{"headers":{"X-A":"1","x-a":"2"}}`, `{"headers":{"X-A":"1","x-a":"2"}}`},
		{"literals", Free(), `[true , false,null ]`, `[true,false,null]`},
		{"a string alone", Free(), ` "\u0041" `, `"A"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonical([]byte(tc.doc), tc.shape)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if string(got) != tc.want {
				t.Fatalf("canonical %s, want %s", got, tc.want)
			}
			again, err := Canonical(got, tc.shape)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("not a fixed point: %s → %s (%v)", got, again, err)
			}
		})
	}
	// What Check refuses, Canonical refuses the same way.
	for _, doc := range []string{`{"path":"a","Path":"b"}`, `{"path":"a","path":"b"}`, `{"offset":1e400}`, `{"path":"a"} x`} {
		want := Check([]byte(doc), closed)
		got, err := Canonical([]byte(doc), closed)
		if got != nil || err == nil || err.Error() != want.Error() {
			t.Errorf("%s: canonical %s, %v; Check says %v", doc, got, err, want)
		}
	}
}

// The shapes of JSON schemas: what they close, what they leave open, and
// what FromSchema refuses to guess at.
func TestFromSchema(t *testing.T) {
	schema := `{"type":"object","properties":{
		"path":{"type":"string","description":"d"},
		"offset":{"type":"integer","minimum":1},
		"ratio":{"type":"number"},
		"edits":{"type":["null","array"],"items":{"type":"object","properties":{"old_text":{"type":"string"}},"additionalProperties":false}},
		"headers":{"type":"object","additionalProperties":{"type":"string"}},
		"any":{}
	},"required":["path"],"additionalProperties":false}`
	s, err := FromSchema([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		doc     string
		problem Problem // -1: accepted
		where   string
	}{
		{`{"path":"a","offset":2,"ratio":0.5,"edits":[{"old_text":"x"}],"headers":{"A":"1","a":"2"},"any":{"K":1,"k":2}}`, -1, ""},
		{`{"edits":null}`, -1, ""},
		{`{"PATH":"a"}`, CaseVariant, "PATH"},
		{`{"edits":[{"Old_Text":"x"}]}`, CaseVariant, "edits[0].Old_Text"},
		{`{"edits":[{"new_text":"x"}]}`, Unknown, "edits[0].new_text"},
		{`{"mode":1}`, Unknown, "mode"},
		{`{"offset":1.5}`, Range, "offset"},
		{`{"offset":9223372036854775808}`, Range, "offset"},
		{`{"ratio":1e400}`, Range, "ratio"},
		{`{"headers":{"A":"1","A":"2"}}`, Duplicate, "headers.A"},
	} {
		err := Check([]byte(tc.doc), s)
		if tc.problem < 0 {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.doc, err)
			}
			continue
		}
		se, ok := err.(*Error)
		if !ok || se.Problem != tc.problem || se.Where(0) != tc.where {
			t.Errorf("%s: %v, want problem %d at %q", tc.doc, err, tc.problem, tc.where)
		}
	}
	open, err := FromSchema([]byte(`{"type":"object","properties":{"mode":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check([]byte(`{"mode":"a","other":[1]}`), open); err != nil {
		t.Errorf("open schema refused another key: %v", err)
	}
	if err := Check([]byte(`{"Mode":"a"}`), open); err == nil {
		t.Error("open schema took a case variant of a property")
	}
	for _, bad := range []string{
		`{"type":"object","anyOf":[{}]}`,
		`{"type":"object","properties":{"a":{"$ref":"#/x"}}}`,
		`{"type":"object","patternProperties":{"^a":{}}}`,
		`{"type":7}`,
		`[]`,
		`{`,
	} {
		if _, err := FromSchema([]byte(bad)); err == nil {
			t.Errorf("%s: read without complaint", bad)
		}
	}
}

func BenchmarkCanonicalTypicalCall(b *testing.B) {
	shape := Of(reflect.TypeFor[args](), true, nil)
	doc := []byte(`{"path":"src/main.go","offset":10,"edits":[{"path":"a.go","old_text":"x := 1"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Canonical(doc, shape); err != nil {
			b.Fatal(err)
		}
	}
}
