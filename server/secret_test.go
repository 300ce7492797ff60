package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/shelltool"
	"github.com/onellm/onellm-mcp/webtools"
)

// A call that needs a configured secret with no value on the server is
// refused before anyone is asked (a person would otherwise approve a secret
// that is then not sent), with an error naming the secret, audited as
// secret_unavailable; nothing runs and nothing is sent.
func TestSecretWithoutValue(t *testing.T) {
	t.Setenv("ONELLM_TEST_EMPTY_SECRET", "")
	for _, tc := range []struct {
		name   string
		tool   toolkit.Tool
		args   string
		source string
		why    string
	}{
		{"command, empty variable", &shelltool.Tool{}, `{"command":"touch ran","secrets":["tok"]}`, `env = "ONELLM_TEST_EMPTY_SECRET"`, "variable ONELLM_TEST_EMPTY_SECRET is empty"},
		{"command, missing file", &shelltool.Tool{}, `{"command":"touch ran","secrets":["tok"]}`, `file = "/nonexistent/onellm-token"`, "its file cannot be read"},
		{"command, empty file", &shelltool.Tool{}, `{"command":"touch ran","secrets":["tok"]}`, `file = "@FILE@"`, "is empty"},
		{"http_request, empty variable", webtools.NewTool(), `{"url":"https://api.test/x"}`, `env = "ONELLM_TEST_EMPTY_SECRET"`, "variable ONELLM_TEST_EMPTY_SECRET is empty"},
		{"http_request, empty file", webtools.NewTool(), `{"url":"https://api.test/x"}`, `file = "@FILE@"`, "is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			empty := filepath.Join(t.TempDir(), "empty-token")
			if err := os.WriteFile(empty, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			ap := &fakeApprover{outcome: toolkit.ApprovalOutcome{Approved: true, Reason: grants.ReasonApproved, Channel: "elicitation"}}
			e := newCallEnv(t, "profile = \"interactive-dev\"\n[secrets.tok]\n"+strings.ReplaceAll(tc.source, "@FILE@", empty)+"\nhosts = [\"api.test\"]\n", ap)
			if st, ok := tc.tool.(toolkit.Starter); ok {
				st.Start(e.p)
			}
			req := mcp.CallToolRequest{}
			req.Params.Name = tc.tool.Name()
			req.Params.RawArguments = json.RawMessage(tc.args)
			res := e.s.call(context.Background(), tc.tool, req)
			text := resultText(res)
			if !res.IsError || !strings.Contains(text, "reason secret_unavailable") || !strings.Contains(text, "secret tok has no value on the server") || !strings.Contains(text, tc.why) {
				t.Fatalf("result %q", text)
			}
			if ap.asked != 0 {
				t.Fatalf("a person was asked %d times about a secret that has no value", ap.asked)
			}
			if _, err := os.Stat(filepath.Join(e.ws, "ran")); err == nil {
				t.Fatal("the command ran")
			}
			lines := e.lines(t)
			if len(lines) == 0 || str(lines[len(lines)-1]["reason_code"]) != string(grants.ReasonSecretUnavailable) {
				t.Fatalf("audit log %v", lines)
			}
		})
	}
}
