package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestTSApprovalElicitation: the official TypeScript clients declare
// elicitation and answer the approval form (e2e/ts/elicit.mjs), over
// streamable HTTP: @modelcontextprotocol/sdk 1.x in the legacy era
// (elicitation/create) and @modelcontextprotocol/client 2.x in the newest
// (input_required, answered by the SDK's own retry). allow_once runs the
// call; deny refuses it with "declined".
func TestTSApprovalElicitation(t *testing.T) {
	dir := tsDir(t)
	f := newFixture(t, tsConfig)
	outside := f.write(t, filepath.Join(f.Root, "outside.txt"), "outside via ts\n")
	srv := startHTTP(t, f)
	for _, cl := range []struct{ mode, version string }{
		{"sdk-http", string(Legacy)},
		{"v2-http", string(Modern)},
	} {
		for _, tc := range []struct {
			decision string
			runs     bool
		}{
			{"allow_once", true},
			{"deny", false},
		} {
			t.Run(cl.mode+"/"+tc.decision, func(t *testing.T) {
				out, errOut, code := runNode(t, dir, []string{"HOME=" + f.Root}, "elicit.mjs", cl.mode, srv.URL, srv.Token, outside, tc.decision)
				if code != 0 {
					t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
				}
				var got struct {
					Version *string `json:"version"`
					Asked   []struct {
						Message string   `json:"message"`
						Fields  []string `json:"fields"`
					} `json:"asked"`
					Result struct {
						IsError bool   `json:"isError"`
						Text    string `json:"text"`
					} `json:"result"`
				}
				if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &got); err != nil {
					t.Fatalf("output %q: %v", out, err)
				}
				if got.Version == nil || *got.Version != cl.version {
					t.Errorf("protocol version %v, want %s", got.Version, cl.version)
				}
				if len(got.Asked) != 1 {
					t.Fatalf("asked %d times, want once: %+v", len(got.Asked), got.Asked)
				}
				if a := got.Asked[0]; !strings.Contains(a.Message, outside) || !strings.Contains(a.Message, "read_file") || len(a.Fields) != 1 || a.Fields[0] != "decision" {
					t.Errorf("the form: %+v", a)
				}
				if tc.runs {
					if got.Result.IsError || got.Result.Text != "outside via ts\n" {
						t.Fatalf("approved call: %+v", got.Result)
					}
				} else if !got.Result.IsError || !strings.Contains(got.Result.Text, "declined") || strings.Contains(got.Result.Text, "outside via ts") {
					t.Fatalf("denied call: %+v", got.Result)
				}
				want := map[bool]string{true: "approved", false: "declined"}[tc.runs]
				if l := lastDecision(t, f, "read_file"); l["reason_code"] != want || l["approval_channel"] != "elicitation" {
					t.Fatalf("audit: %v", l)
				}
			})
		}
	}
}
