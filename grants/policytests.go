package grants

import (
	"fmt"
	"slices"
	"strings"
)

// Policy tests: [[tests]] entries in the config name a request and the
// decision its author expects. They run at every load and reload (and in
// `check`), and a config whose tests fail is refused like a config with a
// bad key, so a policy edit that breaks an expectation never goes into force.

// PolicyTestConfig is one [[tests]] entry as written.
type PolicyTestConfig struct {
	Name             string           `toml:"name"`
	Capability       string           `toml:"capability"`
	Target           TestTargetConfig `toml:"target"`
	RiskLevel        string           `toml:"risk_level"`
	ExecutionSurface string           `toml:"execution_surface"`
	DataClasses      []string         `toml:"data_classes"`
	Expect           string           `toml:"expect"`
	RuleID           string           `toml:"rule_id"`
}

// TestTargetConfig is a test's target, as a tool would fill it: paths as a
// tool argument (relative to the workspace, "~/…" or absolute), a command as
// written on a command line.
type TestTargetConfig struct {
	ToolName string `toml:"tool_name"`
	Path     string `toml:"path"`
	Host     string `toml:"host"`
	Port     int    `toml:"port"`
	Resource string `toml:"resource"`
	Command  string `toml:"command"`
}

// PolicyTest is a checked [[tests]] entry.
type PolicyTest struct {
	Index       int // position among the config's [[tests]]
	Name        string
	Capability  Capability
	Target      TestTargetConfig
	Risk        Risk    // 0: the risk the tool would give
	Surface     Surface // "": the tool's (sandbox for commands)
	DataClasses []DataClass
	Expect      Effect
	RuleID      string // "": any rule

	file string
	line int
}

// TestRequests builds the requests a tool would make for a test, exactly as
// `explain` builds them (the command line supplies it, because resolving
// paths and splitting command lines belongs to the tools).
type TestRequests func(*Policy, PolicyTest) ([]Request, error)

// TestResult is one test's outcome.
type TestResult struct {
	Test    PolicyTest
	Verdict Verdict
	Err     error // the requests could not be built
}

// Pass reports whether the test got what it expected.
func (r TestResult) Pass() bool { return r.Err == nil && r.failure() == "" }

// Deciding is the decision that settled the verdict: the first with the
// verdict's effect.
func (r TestResult) Deciding() Decision {
	for _, d := range r.Verdict.Decisions {
		if d.Effect == r.Verdict.Effect {
			return d
		}
	}
	return Decision{Effect: r.Verdict.Effect}
}

func (r TestResult) failure() string {
	d := r.Deciding()
	got := fmt.Sprintf("got %s (reason %s, rule %s) for %s", r.Verdict.Effect, d.Reason, orString(d.RuleID, "(none)"), d.Request.Describe())
	switch {
	case r.Verdict.Effect != r.Test.Expect:
		return fmt.Sprintf("expected %s, %s", r.Test.Expect, got)
	case r.Test.RuleID != "" && d.RuleID != r.Test.RuleID:
		return fmt.Sprintf("expected %s by rule %s, %s", r.Test.Expect, r.Test.RuleID, got)
	}
	return ""
}

// Summary is the one-line result `check` prints.
func (r TestResult) Summary() string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("FAIL %s: %v", r.Test.Name, r.Err)
	case !r.Pass():
		return fmt.Sprintf("FAIL %s: %s", r.Test.Name, r.failure())
	}
	d := r.Deciding()
	return fmt.Sprintf("pass %s: %s (rule %s)", r.Test.Name, r.Verdict.Effect, orString(d.RuleID, "(none)"))
}

// Tests returns the config's policy tests.
func (p *Policy) Tests() []PolicyTest { return slices.Clone(p.tests) }

// RunTests decides every policy test with requests from build.
func (p *Policy) RunTests(build TestRequests) []TestResult {
	out := make([]TestResult, 0, len(p.tests))
	for _, t := range p.tests {
		reqs, err := build(p, t)
		if err != nil {
			out = append(out, TestResult{Test: t, Err: err})
			continue
		}
		for i := range reqs {
			if t.Risk != 0 {
				reqs[i].Risk = t.Risk
			}
			for _, c := range t.DataClasses {
				if !reqs[i].HasClass(c) {
					reqs[i].DataClasses = append(reqs[i].DataClasses, c)
				}
			}
		}
		out = append(out, TestResult{Test: t, Verdict: p.DecideAll(reqs)})
	}
	return out
}

// TestsError is the refusal for the first failing test, or nil.
func TestsError(results []TestResult) error {
	for _, r := range results {
		if r.Pass() {
			continue
		}
		msg := ""
		if r.Err != nil {
			msg = "cannot be run: " + r.Err.Error()
		} else {
			msg = "policy test failed: " + r.failure()
		}
		if n := failed(results); n > 1 {
			msg += fmt.Sprintf(" (and %d more failing; onellm-mcp check lists them)", n-1)
		}
		return &ConfigError{File: r.Test.file, Line: r.Test.line, Key: fmt.Sprintf("tests[%d]", r.Test.Index), Name: r.Test.Name, Msg: msg}
	}
	return nil
}

func failed(results []TestResult) int {
	n := 0
	for _, r := range results {
		if !r.Pass() {
			n++
		}
	}
	return n
}

// compileTests checks every [[tests]] entry.
func compileTests(cfg *Config) ([]PolicyTest, error) {
	var out []PolicyTest
	names := map[string]bool{}
	for i, tc := range cfg.Tests {
		key := fmt.Sprintf("tests[%d]", i)
		bad := func(sub, msg string) error { return cfg.errAt(key+"."+sub, tc.Name, msg) }
		t := PolicyTest{Index: i, Name: tc.Name, Capability: Capability(tc.Capability), Target: tc.Target,
			RuleID: tc.RuleID, file: cfg.Path, line: cfg.lines.line(key)}
		switch {
		case tc.Name == "":
			return nil, bad("name", "is missing; every test needs a name, for check's report and refusals")
		case names[tc.Name]:
			return nil, bad("name", fmt.Sprintf("%q is used twice; test names must be unique", tc.Name))
		case tc.Capability == "":
			return nil, bad("capability", "is missing; name the capability the request is for (e.g. \"process.exec\")")
		case !t.Capability.Known():
			return nil, bad("capability", fmt.Sprintf("unknown capability %q; a test names one capability, no glob; known, closest first: %s",
				tc.Capability, strings.Join(SuggestCapabilities(tc.Capability), ", ")))
		}
		names[tc.Name] = true
		switch tc.Expect {
		case "allow":
			t.Expect = Allow
		case "ask":
			t.Expect = Ask
		case "deny":
			t.Expect = Deny
		case "":
			return nil, bad("expect", `is missing; say what the policy must decide: "allow", "ask" or "deny"`)
		default:
			return nil, bad("expect", fmt.Sprintf("unknown decision %q; use one of %s", tc.Expect, knownList(tc.Expect, []string{"allow", "ask", "deny"})))
		}
		if tc.RiskLevel != "" {
			r, ok := ParseRisk(tc.RiskLevel)
			if !ok {
				return nil, bad("risk_level", fmt.Sprintf("unknown risk %q; use one of %s", tc.RiskLevel, knownList(tc.RiskLevel, []string{"low", "medium", "high", "critical"})))
			}
			t.Risk = r
		}
		s, err := parseSurface(tc.ExecutionSurface)
		if err != nil {
			return nil, bad("execution_surface", err.Error())
		}
		t.Surface = s
		for _, d := range tc.DataClasses {
			if DataClass(d) != DataCredential {
				return nil, bad("data_classes", fmt.Sprintf("unknown data class %q; known: credential", d))
			}
			t.DataClasses = append(t.DataClasses, DataClass(d))
		}
		if tc.Target.Port < 0 || tc.Target.Port > 65535 {
			return nil, bad("target.port", "must be between 1 and 65535")
		}
		out = append(out, t)
	}
	return out, nil
}
