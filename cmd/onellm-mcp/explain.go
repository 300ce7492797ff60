package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool"
)

const explainAbout = `Decide one request exactly as a tool call would be decided, and print the
decision, the reason code, the rule and the risk. A command line is split as
execute_terminal_command splits it: every command in it is decided.

  onellm-mcp explain workspace.files.read src/main.go
  onellm-mcp explain process.exec 'git push origin main'
  onellm-mcp explain --surface host process.exec ls
  onellm-mcp explain network.http.get https://api.github.com/repos
  onellm-mcp explain secret.use github
  onellm-mcp explain package.install left-pad@1.3.0 host=registry.npmjs.org

TARGET may also be key=value words: path= host= port= resource= command= tool_name= risk=

exit codes: 0 allow, 1 deny, 3 ask (a person would be asked),
            2 a usage mistake or a config that is refused`

func explain(args []string, stdout, stderr io.Writer) error {
	cmd := newCommand("explain", "explain [--config FILE] [--surface sandbox|host] CAPABILITY TARGET...", explainAbout)
	cfgPath := cmd.configFlag()
	surface := cmd.String("surface", "sandbox", "`WHERE` a process.exec request runs: sandbox or host")
	if err := cmd.parse(args, stdout, -1); err != nil {
		return err
	}
	if cmd.NArg() < 1 {
		return &usageError{usage: cmd.usage(), err: errors.New("explain needs a capability")}
	}
	if s := grants.Surface(*surface); s != grants.SurfaceSandbox && s != grants.SurfaceHost {
		return &usageError{usage: cmd.usage(), err: fmt.Errorf("--surface %q: use sandbox or host", *surface)}
	}
	c := grants.Capability(cmd.Arg(0))
	if !c.Known() {
		return &usageError{usage: cmd.usage(), err: fmt.Errorf("unknown capability %q; known, closest first: %s",
			c, strings.Join(grants.SuggestCapabilities(string(c)), ", "))}
	}
	p, err := loadPolicy(*cfgPath, stderr, false)
	if err != nil {
		return exitError{code: 2, err: err}
	}
	target, risk, err := explainTarget(c, cmd.Args()[1:])
	if err != nil {
		return &usageError{usage: cmd.usage(), err: err}
	}
	reqs, err := buildRequests(p, c, target, grants.Surface(*surface), risk)
	if err != nil {
		return exitError{code: 2, err: err}
	}
	v := p.DecideAll(reqs)
	for i, d := range v.Decisions {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "decision: %s\nreason:   %s\nrule:     %s\nrequest:  %s\nrisk:     %s\n",
			d.Effect, d.Reason, orNone(d.RuleID), d.Request.Describe(), d.Request.Risk)
		if len(d.Request.DataClasses) > 0 {
			fmt.Fprintf(stdout, "data:     %v\n", d.Request.DataClasses)
		}
	}
	if len(v.Decisions) > 1 {
		fmt.Fprintf(stdout, "\nthe call as a whole: %s\n", v.Effect)
	}
	switch v.Effect {
	case grants.Allow:
		return nil
	case grants.Ask:
		return exitError{code: 3}
	}
	return exitError{code: 1}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// explainTarget reads the target words of explain: key=value pairs, and the
// rest as the capability's natural target (a path, a command line, a URL, a
// secret name).
func explainTarget(c grants.Capability, words []string) (grants.TestTargetConfig, grants.Risk, error) {
	var t grants.TestTargetConfig
	var risk grants.Risk
	var free []string
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || strings.ContainsAny(k, " /.") {
			free = append(free, w)
			continue
		}
		switch k {
		case "path":
			t.Path = v
		case "host":
			t.Host = v
		case "port":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 65535 {
				return t, 0, fmt.Errorf("port=%q: want a port number (1-65535)", v)
			}
			t.Port = n
		case "resource":
			t.Resource = v
		case "command":
			t.Command = v
		case "tool_name":
			t.ToolName = v
		case "risk":
			r, ok := grants.ParseRisk(v)
			if !ok {
				return t, 0, fmt.Errorf("risk=%q: use low, medium, high or critical", v)
			}
			risk = r
		default:
			free = append(free, w)
		}
	}
	rest := strings.Join(free, " ")
	switch {
	case c.IsFile():
		if t.Path == "" {
			t.Path = rest
		}
	case c == grants.CapProcessExec:
		if t.Command == "" {
			t.Command = rest
		}
	case c.IsNetwork():
		if t.Host == "" && rest != "" {
			if !strings.Contains(rest, "://") {
				rest = "https://" + rest
			}
			u, err := url.Parse(rest)
			if err != nil {
				return t, 0, fmt.Errorf("target %q: %v", rest, err)
			}
			t.Host, t.Path = u.Hostname(), u.Path
			if t.Port == 0 {
				t.Port = 443
				if u.Scheme == "http" {
					t.Port = 80
				}
				if n, err := strconv.Atoi(u.Port()); err == nil {
					t.Port = n
				}
			}
		}
	case c == grants.CapSecretUse || c == grants.CapPackageInstall:
		if t.Resource == "" {
			t.Resource = rest
		}
	}
	return t, risk, nil
}

// testRequests builds a [[tests]] entry's requests as explain builds them.
func testRequests(p *grants.Policy, t grants.PolicyTest) ([]grants.Request, error) {
	surface := t.Surface
	if surface == grants.SurfaceNone {
		surface = grants.SurfaceSandbox
	}
	return buildRequests(p, t.Capability, t.Target, surface, t.Risk)
}

// buildRequests makes the requests a tool would make for the capability
// and target: a path resolved as the file tools resolve it, a command line
// split as execute_terminal_command splits it (unless resource names one
// command). risk, when set, replaces the tools' risk.
func buildRequests(p *grants.Policy, c grants.Capability, t grants.TestTargetConfig, surface grants.Surface, risk grants.Risk) ([]grants.Request, error) {
	req := grants.Request{Capability: c, Target: grants.Target{ToolName: t.ToolName, Resource: t.Resource, Command: t.Command, Port: t.Port}}
	switch {
	case c.IsFile():
		res, err := fstools.Resolve(p, t.Path)
		if err != nil {
			return nil, err
		}
		req.Target.Path = res.Real
	case c == grants.CapProcessExec:
		req.Surface = surface
		if t.Resource == "" {
			// A command line is decided as the tool decides it: every
			// command in it, with the risk its words carry.
			reqs, err := shelltool.LineRequests(p, t.Command, p.Workspace, surface)
			if err != nil {
				return nil, err
			}
			for i := range reqs {
				if risk != 0 {
					reqs[i].Risk = risk
				}
				if reqs[i].Target.ToolName == "" {
					reqs[i].Target.ToolName = t.ToolName
				}
			}
			return reqs, nil
		}
		if req.Target.Command == "" {
			req.Target.Command = t.Resource
		}
	case c.IsNetwork():
		req.Target.Host, req.Target.Path = strings.ToLower(t.Host), t.Path
		if req.Target.Port == 0 {
			req.Target.Port = 443
		}
		req.Target.Method = strings.ToUpper(strings.TrimPrefix(string(c), "network.http."))
	case c == grants.CapPackageInstall:
		req.Target.Host = strings.ToLower(t.Host) // the index
	}
	req.Risk = risk
	if req.Risk == 0 {
		req.Risk = grants.BaseRisk(c, req.Surface)
	}
	return []grants.Request{req}, nil
}
