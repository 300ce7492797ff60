package toolkit

import (
	"bytes"
	"encoding/json"
)

// CanonicalArguments is the one canonical form of a call's arguments, what
// an approval binds (a digest of it) and what telemetry hashes: object keys
// sorted, insignificant white space removed, numbers kept as written,
// prefixed "json\x00". Arguments that are not JSON are their raw bytes
// prefixed "raw\x00" (the tool refuses them anyway); none or null is {}.
func CanonicalArguments(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return append([]byte("raw\x00"), raw...)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return append([]byte("raw\x00"), raw...)
	}
	return append([]byte("json\x00"), canon...)
}
