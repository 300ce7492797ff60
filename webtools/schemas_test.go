package webtools

import (
	"encoding/json"
	"testing"

	"github.com/onellm/onellm-mcp/internal/toolkit/schematest"
)

// TestSchemas keeps the embedded schemas equal to those of the types.
func TestSchemas(t *testing.T) {
	schematest.Check(t, map[string]json.RawMessage{
		"http_request.input.json":  schematest.Input[ToolArgs](),
		"http_request.output.json": schematest.Output[ToolOutput](),
	})
}
