package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/toolchains"
)

// initFile is the config init writes, in the current folder.
const initFile = "onellm-mcp.toml"

// hosts init knows, with whether each can put an approval to the person
// through MCP elicitation. A host that cannot gets the approval console.
var hosts = []struct {
	name        string
	elicits     bool
	description string
}{
	{"claude-desktop", false, "Claude Desktop (claude_desktop_config.json)"},
	{"claude-code", true, "Claude Code (claude mcp add)"},
	{"cursor", true, "Cursor (.cursor/mcp.json)"},
	{"vscode", true, "VS Code (.vscode/mcp.json)"},
	{"http", false, "any MCP client over streamable HTTP"},
}

const initAbout = `Write a commented onellm-mcp.toml in the current folder (the workspace), mode 0600,
starting from the profile; then print exactly what to paste into the host and one
explain line to try. An existing onellm-mcp.toml is never overwritten.

hosts: claude-desktop, claude-code, cursor, vscode, http (without --host: the
generic stdio snippet). Hosts that cannot ask the person through MCP
elicitation (claude-desktop; http, whose client is unknown) get the approval
console turned on.`

func initConfig(args []string, stdout, stderr io.Writer) error {
	cmd := newCommand("init", "init [--profile P] [--host claude-desktop|claude-code|cursor|vscode|http]", initAbout)
	profile := cmd.String("profile", "interactive-dev", "the built-in `PROFILE` to start from: "+strings.Join(grants.ProfileNames(), ", "))
	host := cmd.String("host", "", "the MCP `HOST` to print the snippet for")
	httpAddr := cmd.String("http", "127.0.0.1:8080", "with --host http: the `ADDR` serve --http listens on")
	consoleAddr := cmd.String("console", "127.0.0.1:8765", "for hosts that cannot elicit: the loopback `ADDR` of the approval console")
	if err := cmd.parse(args, stdout, 0); err != nil {
		return err
	}
	if !slices.Contains(grants.ProfileNames(), *profile) {
		return &usageError{usage: cmd.usage(), err: fmt.Errorf("--profile %q: unknown profile; use one of %s", *profile, strings.Join(grants.Closest(*profile, grants.ProfileNames()), ", "))}
	}
	elicits := true
	if *host != "" {
		found := false
		for _, h := range hosts {
			if h.name == *host {
				found, elicits = true, h.elicits
			}
		}
		if !found {
			return &usageError{usage: cmd.usage(), err: fmt.Errorf("--host %q: unknown host; use one of %s", *host, strings.Join(grants.Closest(*host, hostNames()), ", "))}
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if wd, err = filepath.EvalSymlinks(wd); err != nil {
		return err
	}
	cfgPath := filepath.Join(wd, initFile)
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("init: cannot find this binary's path: %w", err)
	}
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		bin = real
	}
	console := ""
	if !elicits {
		console = *consoleAddr
	}
	text := initTOML(*profile, wd, *host, console, findToolchains(os.Getenv("PATH")))
	if err := writeNew(cfgPath, text); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (mode 0600): profile %s, workspace %s\n", cfgPath, *profile, wd)
	// What init wrote must load as serve will load it; say why not when
	// this folder cannot hold a trusted config.
	if _, err := loadPolicy(cfgPath, stderr, false); err != nil {
		return fmt.Errorf("the config was written but would be refused: %w", err)
	}
	fmt.Fprintf(stdout, "check it:  %s check --config %s\n\n", shellQuote(bin), shellQuote(cfgPath))
	printSnippet(stdout, *host, bin, cfgPath, *httpAddr)
	fmt.Fprintf(stdout, "\nTry a decision (exit 0 allow, 1 deny, 3 ask):\n  %s explain --config %s network.http.get https://api.github.com/repos\n",
		shellQuote(bin), shellQuote(cfgPath))
	return nil
}

func hostNames() []string {
	var names []string
	for _, h := range hosts {
		names = append(names, h.name)
	}
	return names
}

// writeNew writes a new file with mode 0600, never over an existing one.
func writeNew(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("init: %s exists already; init never overwrites a config: edit it, or move it away and run init again", path)
	}
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("init: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("init: writing %s: %w", path, err)
	}
	return f.Close()
}

// findToolchains describes the toolchains commands will see, found the
// way the server finds them ([sandbox] toolchains = "auto").
func findToolchains(path string) []string {
	home, _ := os.UserHomeDir()
	getenv := func(k string) string {
		if k == "PATH" {
			return path
		}
		return os.Getenv(k)
	}
	return toolchains.Detect(toolchains.Host{Home: home, Getenv: getenv}, grants.KnownToolchains()).Describe()
}

// initTOML is the commented config init writes.
func initTOML(profile, ws, host, console string, found []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# onellm-mcp config, written by onellm-mcp init. The model can never change it.
# Every key is described in config.example.toml (in the onellm-mcp sources).
# Check it:  onellm-mcp check --config %[1]s
# The server reloads this file when it changes: save it atomically (write a
# temporary file and rename it over this one, as most editors do).

# The built-in profile the rules start from (interactive-dev, permissive-dev,
# strict-production). %[2]s
profile = %[3]q

# The folder the tools work in: "." is this file's folder, %[4]s.
workspace = "."
`, initFile, profileNote(profile), profile, ws)
	b.WriteString(`
# Your own rules come on top of the profile's. Examples (remove the "# "):
#
# [[rules.deny]]
# rule_id    = "no-prod-config"
# capability = "workspace.files.*"
# target     = { path = "deploy/prod/**" }
#
# [[rules.ask]]
# rule_id     = "ask-git-push"
# capability  = "process.exec"
# target      = { resource = "git", command = "git push*" }
# constraints = { approval_expires_seconds = 600 }

# Policy tests: checked at every load; a failing one refuses the config.
[[tests]]
name       = "reading the workspace is allowed"
capability = "workspace.files.read"
target     = { path = "README.md" }
expect     = "` + testExpectRead(profile) + `"

[sandbox]
# Commands run in the kernel sandbox; "none" means no network for them.
network = "none"
`)
	b.WriteString("# Commands get read-only access to the toolchains found, a private HOME and\n" +
		"# private caches (\"auto\"; a list such as [\"go\", \"git\"]; or \"none\").\n" +
		"toolchains = \"auto\"\n")
	if len(found) > 0 {
		b.WriteString("# Toolchains found when this file was written (onellm-mcp doctor says more):\n")
		for _, f := range found {
			fmt.Fprintf(&b, "#   %s\n", f)
		}
	} else {
		b.WriteString("# No toolchain (git, go, python, node, rust) was found.\n")
	}
	b.WriteString("\n[approval]\n# An unanswered approval is denied after this many seconds.\ntimeout_seconds = 120\n")
	if console != "" {
		fmt.Fprintf(&b, `# This host cannot ask you through MCP elicitation, so approvals are shown
# in the approval console: open the URL the server prints on stderr at start-up.
console = %q
`, console)
	} else {
		b.WriteString("# For hosts that cannot ask you through MCP elicitation:\n# console = \"127.0.0.1:8765\"\n")
	}
	if host == "http" {
		b.WriteString(`
[http]
# serve --http reads the bearer token from this variable (at least 16 characters).
token_env = "ONELLM_MCP_TOKEN"
`)
	}
	return b.String()
}

func profileNote(profile string) string {
	switch profile {
	case "interactive-dev":
		return "This one reads and writes the workspace and\n# runs sandboxed commands freely, and asks you for the network, secrets, files\n# outside the workspace, deletes and anything of high risk."
	case "permissive-dev":
		return "This one allows everything except commands on\n# the host, files outside the workspace, the network and unconfigured secrets."
	}
	return "This one denies everything no rule allows."
}

// testExpectRead is what each profile decides for a workspace read.
func testExpectRead(profile string) string {
	if profile == "strict-production" {
		return "deny"
	}
	return "allow"
}

// printSnippet prints what to paste into the host.
func printSnippet(w io.Writer, host, bin, cfg, httpAddr string) {
	args := []string{"serve", "--config", cfg}
	server := map[string]any{"command": bin, "args": args}
	switch host {
	case "claude-code":
		fmt.Fprintf(w, "Add it to Claude Code (run this in the project folder):\n\n  claude mcp add onellm -- %s serve --config %s\n", shellQuote(bin), shellQuote(cfg))
	case "vscode":
		server["type"] = "stdio"
		fmt.Fprintf(w, "Paste into .vscode/mcp.json (merge with any servers already there):\n\n%s\n", indentJSON(map[string]any{"servers": map[string]any{"onellm": server}}))
	case "cursor":
		fmt.Fprintf(w, "Paste into .cursor/mcp.json (or ~/.cursor/mcp.json; merge with any servers already there):\n\n%s\n", indentJSON(map[string]any{"mcpServers": map[string]any{"onellm": server}}))
	case "http":
		fmt.Fprintf(w, "Start the server (keep the token; clients send it as a bearer token):\n\n"+
			"  export ONELLM_MCP_TOKEN=$(openssl rand -hex 32)\n"+
			"  %s serve --http %s --config %s\n\n"+
			"Point the MCP client at:\n\n  URL:    http://%s/mcp\n  header: Authorization: Bearer $ONELLM_MCP_TOKEN\n\n"+
			"(Without ONELLM_MCP_TOKEN set, serve refuses to start; remove token_env from the\nconfig to get a random token printed once on stderr instead.)\n",
			shellQuote(bin), httpAddr, shellQuote(cfg), httpAddr)
	case "claude-desktop":
		fmt.Fprintf(w, "Paste into claude_desktop_config.json (Claude > Settings > Developer > Edit Config;\nmerge with any servers already there), then restart Claude Desktop:\n\n%s\n", indentJSON(map[string]any{"mcpServers": map[string]any{"onellm": server}}))
	default:
		fmt.Fprintf(w, "Paste into your host's MCP config (this shape suits Claude Desktop and Cursor;\nrun init with --host for others):\n\n%s\n", indentJSON(map[string]any{"mcpServers": map[string]any{"onellm": server}}))
	}
}

func indentJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
