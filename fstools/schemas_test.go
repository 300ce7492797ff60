package fstools

import (
	"encoding/json"
	"testing"

	"github.com/onellm/onellm-mcp/internal/toolkit/schematest"
)

// TestSchemas keeps the embedded schemas equal to those of the types.
func TestSchemas(t *testing.T) {
	schematest.Check(t, map[string]json.RawMessage{
		"read_file.input.json":    schematest.Input[ReadFileArgs](),
		"read_file.output.json":   schematest.Output[ReadFileResult](),
		"apply_patch.input.json":  schematest.Input[ApplyPatchArgs](),
		"apply_patch.output.json": schematest.Output[ApplyPatchResult](),
	})
}
