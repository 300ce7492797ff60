package grants

import "testing"

func pkgReq(name, host string) Request {
	return Request{Capability: CapPackageInstall, Target: Target{ToolName: "execute_terminal_command", Resource: name, Host: host},
		Risk: BaseRisk(CapPackageInstall, SurfaceSandbox), Surface: SurfaceSandbox}
}

// TestPackageInstallProfiles: interactive-dev asks, permissive-dev denies
// (even over an allow rule), strict-production denies by its mode, and a
// rule on the index or the package decides.
func TestPackageInstallProfiles(t *testing.T) {
	e := newEnv(t)
	r := pkgReq("left-pad@1.3.0", "registry.npmjs.org")
	check(t, e.policy(t, `profile = "interactive-dev"`), r, askBy("interactive-dev/ask-package-install"))
	check(t, e.policy(t, `profile = "permissive-dev"`), r, denyBy("permissive-dev/deny-package-install"))
	check(t, e.policy(t, `profile = "strict-production"`), r, want{Deny, ReasonUnknownCapability, RuleMode})
	allowNPM := `
[[rules.allow]]
rule_id = "npm-registry"
capability = "package.install"
target = { host = "registry.npmjs.org" }
`
	strict := e.policy(t, `profile = "strict-production"`+allowNPM)
	check(t, strict, r, allowBy("npm-registry"))
	check(t, strict, pkgReq("left-pad", "npm.evil.example"), want{Deny, ReasonUnknownCapability, RuleMode})
	check(t, strict, pkgReq("(package.json)", "registry.npmjs.org"), allowBy("npm-registry"))
	check(t, e.policy(t, `profile = "permissive-dev"`+allowNPM), r, denyBy("permissive-dev/deny-package-install"))
	denyPad := `profile = "interactive-dev"
[[rules.deny]]
rule_id = "no-left-pad"
capability = "package.install"
target = { resource = "left-pad*" }
`
	check(t, e.policy(t, denyPad), r, denyBy("no-left-pad"))
	if BaseRisk(CapPackageInstall, SurfaceSandbox) != RiskHigh {
		t.Errorf("package.install base risk %s, want high", BaseRisk(CapPackageInstall, SurfaceSandbox))
	}
	if got := r.Describe(); got != "package.install left-pad@1.3.0 from registry.npmjs.org" {
		t.Errorf("Describe() = %q", got)
	}
}
