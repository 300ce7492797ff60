// Package schematest keeps the JSON schemas tool packages embed equal to
// the schemas mcp-go derives from their argument and result types. Only
// tests import it.
package schematest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

var update = flag.Bool("update-schemas", false, "rewrite the embedded schemas/*.json from the types")

// Input is the input schema mcp-go derives from T.
func Input[T any]() json.RawMessage {
	return mcp.NewTool("x", mcp.WithInputSchema[T]()).RawInputSchema
}

// Output is the output schema mcp-go derives from T.
func Output[T any]() json.RawMessage {
	b, err := json.Marshal(mcp.NewTool("x", mcp.WithOutputSchema[T]()).OutputSchema)
	if err != nil {
		panic(err)
	}
	return b
}

// Check compares each schemas/NAME file with its derived schema.
func Check(t *testing.T, want map[string]json.RawMessage) {
	t.Helper()
	for name, schema := range want {
		var derived bytes.Buffer
		if err := json.Indent(&derived, schema, "", "  "); err != nil {
			t.Fatal(err)
		}
		derived.WriteByte('\n')
		path := filepath.Join("schemas", name)
		if *update {
			if err := os.MkdirAll("schemas", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, derived.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, derived.Bytes()) {
			t.Errorf("%s differs from the schema of its type (run go test -run TestSchemas -update-schemas): %v", path, err)
		}
	}
}
