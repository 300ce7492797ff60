package server

import (
	"strconv"
	"unicode/utf8"
)

// The two records every call writes (a decision, an outcome) are encoded
// by hand: json.Marshal's reflection over them was about 3% of a small
// read's CPU. The bytes are json.Marshal's exactly (field order,
// omitempty, HTML-safe string escapes, U+2028/U+2029, invalid UTF-8 as
// U+FFFD); TestAuditRecordsAsMarshal and FuzzAuditRecords check that
// against encoding/json, so a field added to decisionLine or outcomeLine
// without its line here fails them.

// appendJSON appends d as json.Marshal writes it.
func (d *decisionLine) appendJSON(b []byte) []byte {
	b = append(b, `{"time":`...)
	b = appendJSONString(b, d.Time)
	b = append(b, `,"event":`...)
	b = appendJSONString(b, d.Event)
	b = append(b, `,"call":`...)
	b = appendJSONString(b, d.Call)
	b = append(b, `,"session":`...)
	b = appendJSONString(b, d.Session)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, d.Tool)
	b = appendOmitString(b, `,"capability":`, string(d.Capability))
	t := &d.Target
	b = append(b, `,"target":{`...)
	n := len(b)
	b = appendOmitString(b, `,"tool_name":`, t.ToolName)
	b = appendOmitString(b, `,"path":`, t.Path)
	b = appendOmitString(b, `,"host":`, t.Host)
	b = appendOmitInt(b, `,"port":`, int64(t.Port))
	b = appendOmitString(b, `,"resource":`, t.Resource)
	b = appendOmitString(b, `,"command":`, t.Command)
	b = appendOmitString(b, `,"method":`, t.Method)
	b = appendOmitString(b, `,"option":`, t.Option)
	b = appendOmitString(b, `,"exe":`, t.Exe)
	if len(b) > n {
		b = append(b[:n], b[n+1:]...) // the first member's comma
	}
	b = append(b, '}')
	b = appendOmitString(b, `,"risk_level":`, d.Risk)
	b = appendOmitString(b, `,"execution_surface":`, string(d.Surface))
	if len(d.DataClasses) > 0 {
		b = append(b, `,"data_classes":[`...)
		for i, c := range d.DataClasses {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, string(c))
		}
		b = append(b, ']')
	}
	b = appendOmitString(b, `,"stage":`, d.Stage)
	if d.Private {
		b = append(b, `,"private":true`...)
	}
	b = append(b, `,"effect":`...)
	b = appendJSONString(b, d.Effect)
	b = append(b, `,"reason_code":`...)
	b = appendJSONString(b, string(d.Reason))
	b = appendOmitString(b, `,"rule_id":`, d.RuleID)
	b = appendOmitString(b, `,"approval_channel":`, d.Channel)
	b = appendOmitString(b, `,"detail":`, d.Detail)
	return append(b, '}')
}

// appendJSON appends o as json.Marshal writes it.
func (o *outcomeLine) appendJSON(b []byte) []byte {
	b = append(b, `{"time":`...)
	b = appendJSONString(b, o.Time)
	b = append(b, `,"event":`...)
	b = appendJSONString(b, o.Event)
	b = append(b, `,"call":`...)
	b = appendJSONString(b, o.Call)
	b = append(b, `,"session":`...)
	b = appendJSONString(b, o.Session)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, o.Tool)
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendInt(b, o.DurationMS, 10)
	if o.ExitCode != nil {
		b = append(b, `,"exit_code":`...)
		b = strconv.AppendInt(b, int64(*o.ExitCode), 10)
	}
	b = appendOmitInt(b, `,"http_status":`, int64(o.HTTPStatus))
	b = appendOmitInt(b, `,"bytes":`, o.Bytes)
	b = appendOmitInt(b, `,"files_changed":`, int64(o.FilesChanged))
	b = appendOmitString(b, `,"error":`, o.Error)
	return append(b, '}')
}

// appendOmitString appends key and s unless s is empty (omitempty).
func appendOmitString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), s)
}

// appendOmitInt appends key and v unless v is 0 (omitempty).
func appendOmitInt(b []byte, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), v, 10)
}

// jsonSafe marks the ASCII bytes encoding/json writes as they are with
// HTML escaping on (its htmlSafeSet): printable, but '"', '\\', '<', '>'
// and '&'.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString appends s quoted as encoding/json's string encoder
// does with HTML escaping (what json.Marshal uses).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
