package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestTSApprovalURLMode: the TypeScript clients declaring URL-mode
// elicitation (e2e/ts/elicit.mjs with ELICIT_URL_FILE), with a console,
// over streamable HTTP: the ask is a link to the console page of that ask;
// the client accepts it claiming an allow, which counts for nothing; the
// person's answer on the page decides.
func TestTSApprovalURLMode(t *testing.T) {
	dir := tsDir(t)
	port := freePort(t)
	f := newFixture(t, tsConfig+fmt.Sprintf("\n[approval]\nconsole = \"127.0.0.1:%d\"\n", port))
	outside := f.write(t, filepath.Join(f.Root, "outside.txt"), "outside via ts\n")
	srv := startHTTP(t, f)
	person := logIn(t, f, port)
	for _, cl := range []struct{ mode, version string }{
		{"sdk-http", string(Legacy)},
		{"v2-http", string(Modern)},
	} {
		for _, tc := range []struct {
			page string // the person's answer
			runs bool
		}{
			{"allow_once", true},
			{"deny", false},
		} {
			t.Run(cl.mode+"/"+tc.page, func(t *testing.T) {
				person.t = t
				urlFile := filepath.Join(t.TempDir(), "url")
				type run struct {
					out, errOut string
					code        int
				}
				done := make(chan run, 1)
				go func() {
					// The client claims the opposite of the person's answer.
					claim := map[bool]string{true: "deny", false: "allow_once"}[tc.runs]
					out, errOut, code := runNode(t, dir, []string{"HOME=" + f.Root, "ELICIT_URL_FILE=" + urlFile}, "elicit.mjs", cl.mode, srv.URL, srv.Token, outside, claim)
					done <- run{out, errOut, code}
				}()
				var link string
				waitFor(t, func() bool { b, err := os.ReadFile(urlFile); link = string(b); return err == nil && link != "" }, "URL elicitation from "+cl.mode)
				if !strings.HasPrefix(link, person.base+"/ask/") || strings.Contains(link, srv.Token) || strings.Contains(link, person.login) {
					t.Fatalf("link %q", link)
				}
				page, csrf := person.open(link)
				if code, body := person.press(page, csrf, tc.page); code != 200 {
					t.Fatalf("answer on the page: %d %q", code, body)
				}
				var r run
				select {
				case r = <-done:
				case <-time.After(60 * time.Second):
					t.Fatal("the TypeScript client did not finish")
				}
				if r.code != 0 {
					t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.errOut)
				}
				var got struct {
					Version *string `json:"version"`
					Asked   []struct{ Mode, URL, ElicitationID string }
					Result  struct {
						IsError bool   `json:"isError"`
						Text    string `json:"text"`
					} `json:"result"`
				}
				if err := json.Unmarshal([]byte(strings.TrimSpace(r.out)), &got); err != nil {
					t.Fatalf("output %q: %v", r.out, err)
				}
				// The 2.x client's 2026-era schema has no elicitationId (it
				// drops the field); the older era carries it.
				if got.Version == nil || *got.Version != cl.version || len(got.Asked) != 1 || got.Asked[0].Mode != "url" ||
					got.Asked[0].URL != link || cl.version == string(Legacy) && !strings.HasSuffix(link, "/"+got.Asked[0].ElicitationID) {
					t.Fatalf("version %v, asked %+v", *got.Version, got.Asked)
				}
				if ran := !got.Result.IsError && got.Result.Text == "outside via ts\n"; ran != tc.runs {
					t.Fatalf("ran=%v, want %v: %+v", ran, tc.runs, got.Result)
				}
				want := map[bool]string{true: "approved", false: "declined"}[tc.runs]
				if l := lastDecision(t, f, "read_file"); l["reason_code"] != want || l["approval_channel"] != "console" {
					t.Fatalf("audit: %v", l)
				}
			})
		}
	}
}
