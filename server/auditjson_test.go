package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// awkward are strings encoding/json escapes in every way it has.
var awkward = []string{"", "plain", `quote " and \ back`, "<script>&amp;</script>", "\b\f\n\r\t\x00\x01\x1f\x7f",
	"é ü 日本", "\u2028 and \u2029", "bad \xff\xfe utf-8 \xc3", "tail \xe2\x80", "/path/with spaces/x.txt"}

// TestAuditRecordsAsMarshal: the hand encoders write what json.Marshal
// writes, for every field set and unset.
func TestAuditRecordsAsMarshal(t *testing.T) {
	one := 0
	var decisions []decisionLine
	var outcomes []outcomeLine
	for i, s := range awkward {
		decisions = append(decisions, decisionLine{Time: s, Event: "decision", Call: s, Session: s, Tool: s,
			Capability: grants.Capability(s), Target: grants.Target{ToolName: s, Path: s, Host: s, Port: i * 1000, Resource: s,
				Command: s, Method: s, Option: s, Exe: s}, Risk: s, Surface: grants.Surface(s),
			DataClasses: []grants.DataClass{grants.DataClass(s), "secret"}, Stage: s, Private: i%2 == 0, Effect: s,
			Reason: grants.Reason(s), RuleID: s, Channel: s, Detail: s})
		outcomes = append(outcomes, outcomeLine{Time: s, Event: s, Call: s, Session: s, Tool: s, DurationMS: int64(i - 3),
			Outcome: toolkit.Outcome{Error: s, HTTPStatus: i, Bytes: int64(-i), FilesChanged: i}})
	}
	decisions = append(decisions, decisionLine{}, decisionLine{DataClasses: []grants.DataClass{}},
		decisionLine{Target: grants.Target{Port: -1}}, decisionLine{Target: grants.Target{Exe: "/x"}})
	outcomes = append(outcomes, outcomeLine{}, outcomeLine{Outcome: toolkit.Outcome{ExitCode: &one}},
		outcomeLine{DurationMS: -1 << 63, Outcome: toolkit.Outcome{Bytes: 1<<63 - 1}})
	for _, d := range decisions {
		checkAsMarshal(t, d, d.appendJSON(nil))
	}
	for _, o := range outcomes {
		checkAsMarshal(t, o, o.appendJSON(nil))
	}
}

func checkAsMarshal(t *testing.T, v any, got []byte) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("hand-encoded\n %s\njson.Marshal\n %s", got, want)
	}
}

// FuzzAuditRecords: any strings and numbers encode as json.Marshal does.
func FuzzAuditRecords(f *testing.F) {
	for i, s := range awkward {
		f.Add(s, awkward[(i+1)%len(awkward)], int64(i), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, s, u string, n int64, flag bool) {
		code := int(n)
		d := decisionLine{Time: s, Event: u, Call: s, Session: u, Tool: s, Capability: grants.Capability(u),
			Target: grants.Target{Path: s, Host: u, Port: int(n), Command: u}, Risk: s, Private: flag,
			Effect: u, Reason: grants.Reason(s), Detail: u}
		if flag {
			d.DataClasses = []grants.DataClass{grants.DataClass(s), grants.DataClass(u)}
			d.Target.Exe, d.Channel = s, u
		}
		checkAsMarshal(t, d, d.appendJSON(nil))
		o := outcomeLine{Time: s, Event: u, Tool: s, DurationMS: n, Outcome: toolkit.Outcome{Error: u, Bytes: n}}
		if flag {
			o.ExitCode = &code
		}
		checkAsMarshal(t, o, o.appendJSON(nil))
	})
}

// TestAuditRecordsCoverEveryField: every field of the two records set (by
// reflection, so a field added later is set too) encodes as json.Marshal
// does.
func TestAuditRecordsCoverEveryField(t *testing.T) {
	var d decisionLine
	fillEvery(reflect.ValueOf(&d).Elem())
	checkAsMarshal(t, d, d.appendJSON(nil))
	var o outcomeLine
	fillEvery(reflect.ValueOf(&o).Elem())
	checkAsMarshal(t, o, o.appendJSON(nil))
}

// fillEvery sets every exported field of v, recursively, to a value that
// is not its zero value.
func fillEvery(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillEvery(v.Field(i))
			}
		}
	case reflect.String:
		v.SetString("s<&>\u2028")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fillEvery(s.Index(0))
		fillEvery(s.Index(1))
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillEvery(p.Elem())
		v.Set(p)
	default:
		panic("fillEvery: no filler for " + v.Kind().String())
	}
}
