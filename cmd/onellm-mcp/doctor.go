package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
	"github.com/onellm/onellm-mcp/shelltool/toolchains"
)

// doctor says what this machine gives the sandbox, which toolchains
// commands will see and how, and what will not work, each with the config
// line that would change it. It changes nothing.
func doctor(args []string, stdout, stderr io.Writer) error {
	cmd := newCommand("doctor", "doctor [--config FILE]",
		"Check what this machine gives the sandbox (landlock, namespaces, seccomp, the exec gate,\n"+
			"cgroups), which toolchains commands will see and how, and what will not work and why,\n"+
			"each with the config line that would change it. Exit 0 when commands can run sandboxed, 1 when not.")
	cfgPath := cmd.configFlag()
	if err := cmd.parse(args, stdout, 0); err != nil {
		return err
	}
	p, err := loadPolicy(*cfgPath, stderr, false)
	if err != nil {
		return err
	}
	var problems []string
	fmt.Fprintf(stdout, "sandbox:\n")
	abi, helper, probeErr := sandbox.ProbeHelper(sandbox.DefaultHelper())
	fmt.Fprintf(stdout, "  helper         %s\n", helper)
	if abi > 0 {
		fmt.Fprintf(stdout, "  landlock       ABI %d\n", abi)
	} else {
		fmt.Fprintf(stdout, "  landlock       unavailable\n")
	}
	if probeErr == nil {
		fmt.Fprintf(stdout, "  sandbox        ok: a command ran with namespaces, landlock, seccomp and the exec gate\n")
	} else {
		fmt.Fprintf(stdout, "  sandbox        FAILS: %v\n", probeErr)
		if p.Sandbox.Required {
			problems = append(problems, "No command can run: the sandbox cannot be applied here. Fix the kernel or permissions above; "+
				"only as a last resort set `[sandbox] required = false`, which runs commands on the host with no protection.")
		} else {
			problems = append(problems, "Commands run ON THE HOST with no protection ([sandbox] required = false).")
		}
	}
	pids, memory, cgErr := sandbox.CgroupLimits()
	switch {
	case cgErr != nil:
		fmt.Fprintf(stdout, "  cgroups        none (%v)\n", cgErr)
		problems = append(problems, "Commands get no cgroup: a fork bomb is bounded only by rlimits and the timeout. "+
			"Run the server in a cgroup that delegates the pids (and memory) controllers, e.g. `systemd-run --user --scope -p Delegate=yes onellm-mcp serve …`.")
	case pids && !memory:
		fmt.Fprintf(stdout, "  cgroups        pids limit; no memory limit (memory controller not delegated)\n")
	default:
		fmt.Fprintf(stdout, "  cgroups        pids and memory limits\n")
	}
	fmt.Fprintf(stdout, "  network        %s (`[sandbox] network`: \"none\", \"proxy\" or \"full\")\n", p.Sandbox.Network)

	fmt.Fprintf(stdout, "toolchains ([sandbox] toolchains = %s):\n", toolchainsSetting(p))
	home, _ := os.UserHomeDir()
	set := toolchains.Detect(toolchains.Host{Home: home, Getenv: os.Getenv}, p.Sandbox.Toolchains)
	for _, line := range set.Describe() {
		fmt.Fprintf(stdout, "  %s\n", line)
	}
	for _, name := range p.Sandbox.Toolchains {
		if !set.Has(name) {
			fmt.Fprintf(stdout, "  %s: not found (nothing of it is opened to commands)\n", name)
		}
	}
	if len(p.Sandbox.Toolchains) > 0 {
		cache, err := os.UserCacheDir()
		if err != nil {
			problems = append(problems, fmt.Sprintf("Toolchains cannot be given to commands: no user cache folder (%v); set XDG_CACHE_HOME.", err))
		} else {
			fmt.Fprintf(stdout, "  commands see:  read-only %s\n", strings.Join(set.Readable(), ", "))
			fmt.Fprintf(stdout, "                 HOME = a fresh empty folder per call; git config = user.name and user.email only\n")
			fmt.Fprintf(stdout, "                 private caches in %s\n", toolchains.WorkspaceCache(cache, p.Workspace))
		}
	}
	doctorInstalls(stdout, set, len(p.Sandbox.Toolchains) > 0)
	if len(p.Sandbox.Toolchains) == 0 {
		problems = append(problems, "Commands see no toolchain under your home folder (pyenv, nvm, rustup, ~/go): "+
			"set `[sandbox] toolchains = \"auto\"` to give them read-only access and private caches.")
	}
	if !slices.Contains(p.Sandbox.Env, "PATH") {
		problems = append(problems, "Commands get no PATH ([sandbox] env lacks it): add \"PATH\" to `[sandbox] env`.")
	}

	if len(problems) == 0 {
		fmt.Fprintf(stdout, "nothing known will fail.\n")
		return nil
	}
	fmt.Fprintf(stdout, "what will not work:\n")
	for _, pr := range problems {
		fmt.Fprintf(stdout, "  - %s\n", pr)
	}
	if probeErr != nil && p.Sandbox.Required {
		return exitError{code: 1, err: fmt.Errorf("the sandbox cannot be applied here")}
	}
	return nil
}

// doctorInstalls says how installers are held to the index a command's
// line decided (package.install): the settings every sandboxed command
// gets (toolchains.IndexPins, the ones the runner sets) and the
// installations' own config files that may hold registry tokens, which
// commands see hidden (toolchains.Set.Configs). Without toolchains neither
// is given.
func doctorInstalls(w io.Writer, set toolchains.Set, enabled bool) {
	if !enabled {
		fmt.Fprintf(w, "  installs:      npm and pip are NOT held to the decided index ([sandbox] toolchains = \"none\"): a project's .npmrc\n"+
			"                 or a pip.conf can choose where an install fetches from (the egress proxy still decides each host)\n")
		return
	}
	fmt.Fprintf(w, "  installs:      every command gets, so that what package.install decided is what is fetched:\n")
	for _, pin := range toolchains.IndexPins() {
		fmt.Fprintf(w, "                 %s=%s: %s\n", pin.Key, pin.Value, pin.Why)
	}
	configs := set.Configs()
	if len(configs) == 0 {
		fmt.Fprintf(w, "                 installation configs hidden from commands: none found\n")
		return
	}
	fmt.Fprintf(w, "                 installation configs hidden from commands (they may hold registry tokens; a rule allowing\n"+
		"                 filesystem.read of one by its exact path lifts it):\n")
	for _, c := range configs {
		fmt.Fprintf(w, "                   %s\n", c)
	}
}

func toolchainsSetting(p *grants.Policy) string {
	switch {
	case len(p.Sandbox.Toolchains) == 0:
		return `"none"`
	case slices.Equal(p.Sandbox.Toolchains, grants.KnownToolchains()):
		return `"auto"`
	}
	return fmt.Sprintf("%q", p.Sandbox.Toolchains)
}
