package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool"
)

const explainUsage = `explain [--config FILE] [--surface sandbox|host] CAPABILITY TARGET...
  explain workspace.files.read src/main.go
  explain process.exec 'git push origin main'
  explain network.http.get https://api.github.com/repos
  explain secret.use github
  TARGET may also be key=value pairs: path= host= port= resource= command= tool_name= risk=`

func explain(args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("explain", stderr)
	surface := fs.String("surface", "sandbox", "execution surface for process.exec: sandbox or host")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		return fmt.Errorf("explain needs a capability\n%s", explainUsage)
	}
	p, err := loadPolicy(*cfgPath, stderr, false)
	if err != nil {
		return err
	}
	req, err := explainRequest(p, grants.Capability(fs.Arg(0)), fs.Args()[1:], grants.Surface(*surface))
	if err != nil {
		return err
	}
	reqs := []grants.Request{req}
	if req.Capability == grants.CapProcessExec && !strings.Contains(strings.Join(fs.Args()[1:], " "), "resource=") {
		// A command line is decided as the tool decides it: every command
		// in it, with the risk its words carry.
		if reqs, err = shelltool.LineRequests(p, req.Target.Command, p.Workspace, req.Surface); err != nil {
			return err
		}
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
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// explainRequest builds the request a tool would make for the capability
// and target words.
func explainRequest(p *grants.Policy, c grants.Capability, words []string, surface grants.Surface) (grants.Request, error) {
	if !c.Known() {
		return grants.Request{}, fmt.Errorf("unknown capability %q", c)
	}
	req := grants.Request{Capability: c}
	var free []string
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || strings.ContainsAny(k, " /.") {
			free = append(free, w)
			continue
		}
		switch k {
		case "path":
			req.Target.Path = v
		case "host":
			req.Target.Host = strings.ToLower(v)
		case "port":
			n, err := strconv.Atoi(v)
			if err != nil {
				return req, fmt.Errorf("port=%q: not a number", v)
			}
			req.Target.Port = n
		case "resource":
			req.Target.Resource = v
		case "command":
			req.Target.Command = v
		case "tool_name":
			req.Target.ToolName = v
		case "risk":
			r, ok := grants.ParseRisk(v)
			if !ok {
				return req, fmt.Errorf("risk=%q: use low, medium, high or critical", v)
			}
			req.Risk = r
		default:
			free = append(free, w)
		}
	}
	rest := strings.Join(free, " ")
	switch {
	case c.IsFile():
		if req.Target.Path == "" {
			req.Target.Path = rest
		}
		res, err := fstools.Resolve(p, req.Target.Path)
		if err != nil {
			return req, err
		}
		req.Target.Path = res.Real
	case c == grants.CapProcessExec:
		if req.Target.Command == "" {
			req.Target.Command = rest
		}
		if req.Target.Resource == "" {
			req.Target.Resource, _, _ = strings.Cut(req.Target.Command, " ")
		}
		req.Surface = surface
	case c.IsNetwork():
		if req.Target.Host == "" && rest != "" {
			if !strings.Contains(rest, "://") {
				rest = "https://" + rest
			}
			u, err := url.Parse(rest)
			if err != nil {
				return req, fmt.Errorf("target %q: %v", rest, err)
			}
			req.Target.Host, req.Target.Path = strings.ToLower(u.Hostname()), u.Path
			if req.Target.Port == 0 {
				req.Target.Port = 443
				if u.Scheme == "http" {
					req.Target.Port = 80
				}
				if n, err := strconv.Atoi(u.Port()); err == nil {
					req.Target.Port = n
				}
			}
		}
		req.Target.Method = strings.ToUpper(strings.TrimPrefix(string(c), "network.http."))
	case c == grants.CapSecretUse:
		if req.Target.Resource == "" {
			req.Target.Resource = rest
		}
	}
	if req.Risk == 0 {
		req.Risk = grants.BaseRisk(c, req.Surface)
	}
	return req, nil
}

// landlockABI asks the kernel which landlock ABI it offers.
func landlockABI() (int, error) {
	const createRulesetVersion = 1 // LANDLOCK_CREATE_RULESET_VERSION
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, createRulesetVersion)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
