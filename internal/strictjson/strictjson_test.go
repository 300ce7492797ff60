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
// told about duplicates or not, and reads at all.
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
			if s == shape {
				var a args
				dec := json.NewDecoder(bytes.NewReader(doc))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&a); err != nil && !strings.Contains(err.Error(), "cannot unmarshal") {
					t.Fatalf("accepted %q, refused by a strict decode: %v", doc, err)
				}
			}
		}
	})
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
