package server

import (
	"github.com/mark3labs/mcp-go/mcp"
)

// toolResponse is a tools/call response as mcp-go writes it
// (CallToolResult.MarshalJSON: the keys sorted, content never null), in a
// shape encoding/json writes in one pass. mcp-go's MarshalJSON builds a
// map, marshals it and hands the bytes back to the encoder, which scans
// them again: a result's text was escaped, then compacted, and the map,
// its slice and the bytes were garbage. TestToolResponseAsMCPGo checks the
// bytes are mcp-go's.
type toolResponse struct {
	JSONRPC string        `json:"jsonrpc"`
	ID      mcp.RequestId `json:"id"`
	Result  toolResult    `json:"result"`
}

type toolResult struct {
	Content           []mcp.Content `json:"content"`
	IsError           bool          `json:"isError,omitempty"`
	StructuredContent any           `json:"structuredContent,omitempty"`
}

// encodable is what the stdio link encodes for resp: a tools/call result
// that has nothing but content, isError and structuredContent as a
// toolResponse, anything else as it is.
func encodable(resp mcp.JSONRPCMessage) any {
	r, ok := resp.(mcp.JSONRPCResponse)
	if !ok {
		return resp
	}
	var res *mcp.CallToolResult
	switch v := r.Result.(type) {
	case *mcp.CallToolResult:
		res = v
	case mcp.CallToolResult:
		res = &v
	}
	if res == nil || res.Meta != nil || res.ResultType != "" || len(res.InputRequests) > 0 || res.RequestState != "" {
		return resp
	}
	out := toolResult{Content: res.Content, IsError: res.IsError, StructuredContent: res.StructuredContent}
	if len(res.RawStructuredContent) > 0 {
		out.StructuredContent = res.RawStructuredContent
	}
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	return toolResponse{JSONRPC: r.JSONRPC, ID: r.ID, Result: out}
}
