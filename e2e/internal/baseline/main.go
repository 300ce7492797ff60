// Command baseline is the smallest comparable MCP server: mcp-go over stdio
// with one tool that reads a file, no policy, no audit. The e2e benchmarks
// run it beside onellm-mcp so the round-trip figures have a reference
// measured on the same machine at the same moment.
package main

import (
	"context"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	s := server.NewMCPServer("baseline", "1")
	s.AddTool(mcp.NewTool("read_file", mcp.WithString("path", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, err := os.ReadFile(req.GetString("path", ""))
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(string(b)), nil
		})
	if err := server.ServeStdio(s); err != nil {
		os.Exit(1)
	}
}
