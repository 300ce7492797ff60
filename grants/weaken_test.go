package grants

import (
	"strings"
	"testing"
)

func TestWeakenings(t *testing.T) {
	ws := t.TempDir()
	compile := func(src string) *Policy {
		t.Helper()
		cfg, err := Parse([]byte(src), "w.toml", ws)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(cfg, CompileOptions{Executable: testExecutable, Home: testHome})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const base = `profile = "interactive-dev"
[[rules.deny]]
rule_id = "no-prod"
capability = "workspace.files.*"
target = { path = "deploy/prod/**" }
[[rules.ask]]
rule_id = "ask-push"
capability = "process.exec"
target = { command = "git push*" }
[[rules.allow]]
rule_id = "gh"
capability = "network.http.get"
target = { host = "api.github.com" }
[secrets.gh]
env = "GH"
hosts = ["api.github.com"]
`
	tests := []struct {
		name string
		next string
		want []string // each must appear; nil: no weakening
	}{
		{"same", base, nil},
		{"stricter: a deny added, an allow removed", strings.Replace(base, `[[rules.allow]]
rule_id = "gh"
capability = "network.http.get"
target = { host = "api.github.com" }`, `[[rules.deny]]
rule_id = "no-net"
capability = "network.*"`, 1), nil},
		{"deny removed", strings.Replace(base, `[[rules.deny]]
rule_id = "no-prod"
capability = "workspace.files.*"
target = { path = "deploy/prod/**" }`, "", 1), []string{"deny rule no-prod removed"}},
		{"deny changed", strings.Replace(base, "deploy/prod/**", "deploy/prod/*.toml", 1), []string{"deny rule no-prod changed"}},
		{"ask made allow", strings.Replace(base, "[[rules.ask]]\nrule_id = \"ask-push\"", "[[rules.allow]]\nrule_id = \"ask-push\"", 1), []string{"ask rule ask-push is now allow"}},
		{"allow added", base + "[[rules.allow]]\nrule_id = \"all\"\ncapability = \"*\"\n", []string{"allow rule all added"}},
		{"allow widened", strings.Replace(base, `host = "api.github.com" }`, `host = "*.github.com" }`, 1), []string{"allow rule gh changed"}},
		{"mode loosened", base + "mode = \"permissive\"\n", nil}, // mode after a table is a key of that table: refused below
		{"profile and mode", strings.Replace(base, `profile = "interactive-dev"`, "profile = \"interactive-dev\"\nmode = \"permissive\"", 1), []string{"mode interactive → permissive"}},
		{"sandbox relaxed", base + "[sandbox]\nrequired = false\nnetwork = \"full\"\nwritable = [\"/srv\"]\nenv = [\"PATH\", \"AWS_SECRET\"]\n",
			[]string{"sandbox.required true → false", "sandbox.network none → full", "sandbox.writable adds /srv", "sandbox.env adds AWS_SECRET"}},
		{"secret to more hosts", strings.Replace(base, `hosts = ["api.github.com"]`, `hosts = ["api.github.com", "evil.example"]`, 1), []string{"secret gh may now be sent to evil.example"}},
	}
	old := compile(base)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "mode loosened" {
				if _, err := Parse([]byte(tt.next), "w.toml", ws); err == nil {
					t.Fatal("mode written inside [secrets.gh] was accepted")
				}
				return
			}
			got := Weakenings(old, compile(tt.next))
			if tt.want == nil && len(got) > 0 {
				t.Fatalf("weakenings %q, want none", got)
			}
			joined := strings.Join(got, "; ")
			for _, w := range tt.want {
				if !strings.Contains(joined, w) {
					t.Errorf("%q lacks %q", joined, w)
				}
			}
		})
	}
}
