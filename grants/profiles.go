package grants

import (
	"slices"
	"sort"
)

// Mode is what a policy does with a request no rule matched.
type Mode int

// Modes. Strict is the zero value: an unset mode denies.
const (
	ModeStrict Mode = iota
	ModeInteractive
	ModePermissive
)

func (m Mode) String() string {
	switch m {
	case ModeInteractive:
		return "interactive"
	case ModePermissive:
		return "permissive"
	default:
		return "strict"
	}
}

func parseMode(s string) (Mode, bool) {
	switch s {
	case "strict":
		return ModeStrict, true
	case "interactive":
		return ModeInteractive, true
	case "permissive":
		return ModePermissive, true
	}
	return 0, false
}

// profile is a built-in starting point: a mode and rules, written in the same
// form as a config's rules and compiled by the same code.
type profile struct {
	mode             Mode
	deny, ask, allow []RuleConfig
}

// The built-in profiles, exactly as SPEC.md's table lists them (with
// package.install: interactive-dev asks, permissive-dev denies,
// strict-production denies by its mode, so an allow rule can admit an
// index). The credential-flow deny is built into every policy
// (deny_credential_flow), so it has no rule here.
var profiles = map[string]profile{
	"strict-production": {
		mode: ModeStrict,
		deny: []RuleConfig{
			{RuleID: "strict-production/deny-unbrokered-secrets", Capability: "secret.*", onlyUnconfiguredSecrets: true},
		},
	},
	"interactive-dev": {
		mode: ModeInteractive,
		ask: []RuleConfig{
			{RuleID: "interactive-dev/ask-host-exec", Capability: string(CapProcessExec), Conditions: ConditionsConfig{ExecutionSurface: string(SurfaceHost)}},
			{RuleID: "interactive-dev/ask-network", Capability: "network.*"},
			{RuleID: "interactive-dev/ask-secret-use", Capability: string(CapSecretUse)},
			{RuleID: "interactive-dev/ask-package-install", Capability: string(CapPackageInstall)},
			{RuleID: "interactive-dev/ask-outside-workspace", Capability: "filesystem.*"},
			{RuleID: "interactive-dev/ask-workspace-delete", Capability: string(CapWorkspaceDelete)},
			{RuleID: "interactive-dev/ask-high-risk", Capability: "*", Conditions: ConditionsConfig{RiskLevel: []string{"high", "critical"}}},
		},
		allow: []RuleConfig{
			{RuleID: "interactive-dev/allow-workspace-read", Capability: string(CapWorkspaceRead)},
			{RuleID: "interactive-dev/allow-workspace-write", Capability: string(CapWorkspaceWrite)},
			{RuleID: "interactive-dev/allow-sandboxed-exec", Capability: string(CapProcessExec), Conditions: ConditionsConfig{ExecutionSurface: string(SurfaceSandbox)}},
			{RuleID: "interactive-dev/allow-ask-user", Capability: string(CapUserAsk)},
		},
	},
	"permissive-dev": {
		mode: ModePermissive,
		deny: []RuleConfig{
			{RuleID: "permissive-dev/deny-host-exec", Capability: string(CapProcessExec), Conditions: ConditionsConfig{ExecutionSurface: string(SurfaceHost)}},
			{RuleID: "permissive-dev/deny-outside-workspace", Capability: "filesystem.*"},
			{RuleID: "permissive-dev/deny-network", Capability: "network.*"},
			{RuleID: "permissive-dev/deny-unconfigured-secrets", Capability: string(CapSecretUse), onlyUnconfiguredSecrets: true},
			{RuleID: "permissive-dev/deny-package-install", Capability: string(CapPackageInstall)},
		},
		allow: []RuleConfig{
			{RuleID: "permissive-dev/allow-rest", Capability: "*"},
		},
	},
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (p profile) rules() (deny, ask, allow []RuleConfig) {
	return slices.Clone(p.deny), slices.Clone(p.ask), slices.Clone(p.allow)
}
