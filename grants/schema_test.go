package grants

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2/unstable"
)

// TestCheckValueKinds: values are checked against every kind of Go field a
// config section may grow, and named in TOML's words.
func TestCheckValueKinds(t *testing.T) {
	tests := []struct {
		typ  reflect.Type
		toml string
		want string // "" accepts
	}{
		{reflect.TypeFor[int32](), "7", ""},
		{reflect.TypeFor[int32](), "9999999999", "out of range"},
		{reflect.TypeFor[uint16](), "65535", ""},
		{reflect.TypeFor[uint16](), "-1", "out of range"},
		{reflect.TypeFor[uint64](), "0x10", ""},
		{reflect.TypeFor[float64](), "1.5", ""},
		{reflect.TypeFor[float64](), "2", ""},
		{reflect.TypeFor[float64](), `"fast"`, `want a number, got a string "fast"`},
		{reflect.TypeFor[int64](), "1_000", ""},
		{reflect.TypeFor[int](), "true", "want an integer, got a boolean true"},
		{reflect.TypeFor[*bool](), "false", ""},
		{reflect.TypeFor[[]string](), `["a", 2]`, "want a list of strings, got an integer 2 as item 2"},
		{reflect.TypeFor[string](), "1979-05-27", "want a string, got a date or time 1979-05-27"},
		{reflect.TypeFor[SecretConfig](), `{ env = "X", Hosts = [] }`, `unknown key "Hosts"; keys are case-sensitive: write "hosts"`},
	}
	for _, tt := range tests {
		var p unstable.Parser
		p.Reset([]byte("k = " + tt.toml + "\n"))
		if !p.NextExpression() {
			t.Fatalf("%s: %v", tt.toml, p.Error())
		}
		kv := p.Expression()
		err := checkValue("k", tt.typ, kv.Value(), keyLines{}, func(*unstable.Node) int { return 1 }, 1)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s as %s: %s", tt.toml, tt.typ, err.msg)
		case tt.want != "" && (err == nil || !strings.Contains(err.msg, tt.want)):
			t.Errorf("%s as %s: got %v, want %q", tt.toml, tt.typ, err, tt.want)
		}
	}
}
