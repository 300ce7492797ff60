package grants

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchPolicy builds a strict policy with n config rules, a mix of path,
// host and command rules, none of which matches the benchmark requests
// except the last allow rule of each kind.
func benchPolicy(b *testing.B, n int) (*Policy, env) {
	b.Helper()
	e := newEnv(b)
	var src strings.Builder
	src.WriteString("mode = \"strict\"\n")
	for i := range n - 3 {
		effect := []string{"deny", "ask", "allow"}[i%3]
		fmt.Fprintf(&src, "[[rules.%s]]\nrule_id = \"r%d\"\n", effect, i)
		switch i % 4 {
		case 0:
			fmt.Fprintf(&src, "capability = \"workspace.files.*\"\ntarget = { path = \"dir%d/**/*.go\" }\n", i)
		case 1:
			fmt.Fprintf(&src, "capability = \"network.http.*\"\ntarget = { host = \"*.host%d.example.com\" }\n", i)
		case 2:
			fmt.Fprintf(&src, "capability = \"process.exec\"\ntarget = { command = \"tool%d sub*\" }\n", i)
		case 3:
			fmt.Fprintf(&src, "capability = \"*\"\ntarget = { path = \"/opt/p%d/*\", host = \"h%d.example.com\" }\nconditions = { risk_level = [\"critical\"] }\n", i, i)
		}
	}
	src.WriteString(`[[rules.allow]]
rule_id = "late-path"
capability = "workspace.files.read"
target = { path = "src/**/*.go" }
[[rules.allow]]
rule_id = "late-host"
capability = "network.http.get"
target = { host = "*.github.com" }
[[rules.allow]]
rule_id = "late-command"
capability = "process.exec"
target = { command = "git push*" }
`)
	p := e.policy(b, src.String())
	if got := len(p.Rules()); got != n {
		b.Fatalf("%d rules, want %d", got, n)
	}
	return p, e
}

func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		p, e := benchPolicy(b, n)
		reqs := map[string]Request{
			"path":    fileReq(CapWorkspaceRead, e.in("src/pkg/sub/main.go")),
			"host":    httpReq("GET", "api.github.com"),
			"command": execReq("git push origin main", SurfaceSandbox),
		}
		for _, kind := range []string{"path", "host", "command"} {
			r := reqs[kind]
			want := "late-" + kind
			if d := p.Decide(r); d.Effect != Allow || d.RuleID != want {
				b.Fatalf("%s: %s", kind, d.Explain())
			}
			b.Run(fmt.Sprintf("rules=%d/%s", n, kind), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p.Decide(r)
				}
			})
		}
	}
}

func BenchmarkDecideAll(b *testing.B) {
	p, e := benchPolicy(b, 100)
	reqs := []Request{
		fileReq(CapWorkspaceRead, e.in("src/a.go")),
		execReq("git push origin main", SurfaceSandbox),
		httpReq("GET", "api.github.com"),
	}
	b.ReportAllocs()
	for b.Loop() {
		p.DecideAll(reqs)
	}
}

func BenchmarkCompile(b *testing.B) {
	e := newEnv(b)
	src := `profile = "interactive-dev"
[[rules.allow]]
rule_id = "a"
capability = "process.exec"
target = { command = "re:go (test|vet) .*" }
`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.compile(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseExample: reading config.example.toml strictly (viper, the
// schema walk with exact keys and lines, the typed decode, validation).
func BenchmarkParseExample(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "config.example.toml"))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, "config.example.toml", dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckSchema: the schema walk alone.
func BenchmarkCheckSchema(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "config.example.toml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := checkSchema(data, "config.example.toml"); err != nil {
			b.Fatal(err)
		}
	}
}
