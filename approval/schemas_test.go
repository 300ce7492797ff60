package approval

import (
	"encoding/json"
	"testing"

	"github.com/onellm/onellm-mcp/internal/toolkit/schematest"
)

// TestSchemas keeps the embedded schemas equal to those of the types.
func TestSchemas(t *testing.T) {
	schematest.Check(t, map[string]json.RawMessage{
		"ask_user.input.json":  schematest.Input[AskUserArgs](),
		"ask_user.output.json": schematest.Output[AskUserResult](),
	})
}
