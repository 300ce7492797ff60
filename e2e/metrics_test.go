package e2e

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetricsScrape: /metrics, behind the same token as /mcp, shows the
// counts of a mixed load: calls by tool and outcome, decisions by effect
// and reason, command durations, no pending approval left.
func TestMetricsScrape(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`+httpConfig)
	f.write(t, "in.txt", "in\n")
	outside := f.write(t, filepath.Join(f.Root, "outside.txt"), "outside\n")
	srv := startHTTP(t, f)
	c := httpClient(t, srv.URL, srv.Token, Legacy) // declares no elicitation: asks are refused
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "in.txt"}},
		{"read_file", map[string]any{"path": "in.txt"}},
		{"read_file", map[string]any{"path": outside}},              // asks, no channel: refused
		{"read_file", map[string]any{"path": "in.txt", "bogus": 1}}, // invalid arguments
		{"execute_terminal_command", map[string]any{"command": "echo hi"}},
		{"execute_terminal_command", map[string]any{"command": "exit 3"}},
	} {
		call(t, c, tc.tool, tc.args)
	}

	get := func(token string) (int, string) {
		req, _ := http.NewRequest("GET", srv.Base+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without a token: %d", code)
	}
	code, body := get(srv.Token)
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	for _, want := range []string{
		`onellm_tool_calls_total{tool="read_file",outcome="ok"} 2`,
		`onellm_tool_calls_total{tool="read_file",outcome="refused"} 1`,
		`onellm_tool_calls_total{tool="read_file",outcome="invalid_arguments"} 1`,
		`onellm_tool_calls_total{tool="execute_terminal_command",outcome="ok"} 1`,
		`onellm_tool_calls_total{tool="execute_terminal_command",outcome="tool_error"} 1`,
		`onellm_decisions_total{effect="deny",reason="approval_unavailable"} 1`,
		`onellm_command_duration_seconds_count{result="ok"} 1`,
		`onellm_command_duration_seconds_count{result="failed"} 1`,
		"onellm_sandbox_start_seconds_count 2", // both commands ran in the sandbox
		`onellm_approval_wait_seconds_count{reason="approval_unavailable"} 1`,
		`onellm_pending_approvals 0`,
		"# TYPE onellm_audit_write_failures_total counter",
	} {
		if !strings.Contains(body, want+"\n") && !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "in.txt") || strings.Contains(body, "echo hi") || strings.Contains(body, outside) {
		t.Error("/metrics carries a path or a command")
	}
	if t.Failed() {
		t.Log(body)
	}
}
