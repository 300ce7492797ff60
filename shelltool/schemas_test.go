package shelltool

import (
	"encoding/json"
	"testing"

	"github.com/onellm/onellm-mcp/internal/toolkit/schematest"
)

// TestSchemas keeps the embedded schemas equal to those of the types.
func TestSchemas(t *testing.T) {
	schematest.Check(t, map[string]json.RawMessage{
		"execute_terminal_command.input.json":  schematest.Input[Args](),
		"execute_terminal_command.output.json": schematest.Output[Output](),
	})
}
