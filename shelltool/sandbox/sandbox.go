//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Run runs s under the sandbox. Cancelling ctx kills the command (the whole
// pid namespace) and Run returns the partial Result with ctx.Err(). An error
// wrapping ErrUnavailable means nothing ran.
func Run(ctx context.Context, s Spec) (Result, error) {
	n, err := normalize(s, true)
	if err != nil {
		return Result{}, err
	}
	return execute(ctx, &n, SelfHelper())
}

// RunHost runs s on the host without restrictions (sandbox.required =
// false): its own session and process group, the exact environment, the
// timeout and the output caps still apply. Writable, Readable, ReadOnly,
// Network and FileSizeMax are ignored.
func RunHost(ctx context.Context, s Spec) (Result, error) {
	n, err := normalize(s, false)
	if err != nil {
		return Result{}, err
	}
	return execute(ctx, &n, nil)
}

// Probe returns the landlock ABI of the running kernel and nil when the
// sandbox, exec gate included, can be applied here; it runs a command that
// execs a program in the sandbox to prove it (a few milliseconds): the gate
// must have seen that exec. Callers cache the answer. Its helper is the
// running binary (ProbeHelper probes another).
func Probe() (int, error) { return probe(SelfHelper()) }

func probe(h *HelperProgram) (int, error) {
	abi, err := landlockABI()
	if err != nil {
		return 0, fmt.Errorf("%w: landlock: %v", ErrUnavailable, err)
	}
	if abi < 1 {
		return abi, fmt.Errorf("%w: landlock ABI %d", ErrUnavailable, abi)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var seen atomic.Bool
	gate := func(ev ExecEvent) bool {
		seen.Store(true)
		return ev.Problem == ""
	}
	n, err := normalize(Spec{Command: "/bin/sh -c 'exit 0'", Dir: "/tmp", Timeout: 10 * time.Second, ExecGate: gate}, true)
	if err != nil {
		return abi, err
	}
	r, err := execute(ctx, &n, h)
	if err != nil {
		return abi, err
	}
	if r.ExitCode != 0 {
		return abi, fmt.Errorf("%w: probe command exited %d (%s)", ErrUnavailable, r.ExitCode, strings.TrimSpace(r.Stderr))
	}
	if !seen.Load() {
		return abi, fmt.Errorf("%w: exec gate: the probe's exec was not seen", ErrUnavailable)
	}
	return abi, nil
}

func normalize(s Spec, sandboxed bool) (Spec, error) {
	bad := func(f string, a ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("sandbox: invalid spec: "+f, a...)
	}
	if s.Shell == "" {
		s.Shell = "/bin/bash"
		if _, err := os.Stat(s.Shell); err != nil {
			s.Shell = "/bin/sh"
		}
	}
	if !filepath.IsAbs(s.Shell) {
		return bad("shell %q is not absolute", s.Shell)
	}
	clean := func(what string, in []string) ([]string, error) {
		out := make([]string, 0, len(in))
		for _, p := range in {
			if !filepath.IsAbs(p) {
				return nil, fmt.Errorf("sandbox: invalid spec: %s path %q is not absolute", what, p)
			}
			out = append(out, filepath.Clean(p))
		}
		return out, nil
	}
	var err error
	if s.Writable, err = clean("writable", s.Writable); err != nil {
		return Spec{}, err
	}
	if s.Readable, err = clean("readable", s.Readable); err != nil {
		return Spec{}, err
	}
	if s.ReadOnly, err = clean("read-only", s.ReadOnly); err != nil {
		return Spec{}, err
	}
	if s.Hidden, err = clean("hidden", s.Hidden); err != nil {
		return Spec{}, err
	}
	if s.GitDirs, err = clean("git", s.GitDirs); err != nil {
		return Spec{}, err
	}
	for _, g := range s.GitDirs {
		if !within(g, s.Writable) {
			return bad("git directory %q is outside the writable roots", g)
		}
	}
	for _, w := range s.Writable {
		if w == "/" {
			return bad("writable root \"/\" is refused")
		}
	}
	if s.Home != "" {
		if err := checkHome(s.Home, slices.Concat(s.Writable, s.Readable), sandboxed); err != nil {
			return bad("%v", err)
		}
	}
	if s.Dir == "" {
		s.Dir = "/tmp"
		if len(s.Writable) > 0 {
			s.Dir = s.Writable[0]
		}
	}
	if !filepath.IsAbs(s.Dir) {
		return bad("dir %q is not absolute", s.Dir)
	}
	s.Dir = filepath.Clean(s.Dir)
	if sandboxed && s.Dir != "/tmp" && !within(s.Dir, s.Writable) && !within(s.Dir, s.Readable) {
		return bad("dir %q is outside the writable and readable roots", s.Dir)
	}
	switch s.Network {
	case "":
		s.Network = NetworkNone
	case NetworkNone, NetworkFull:
	case NetworkProxy:
		if sandboxed && s.Proxy == nil {
			return bad("network %q needs a Proxy handler", s.Network)
		}
	default:
		return bad("network %q", s.Network)
	}
	if s.Env == nil {
		s.Env = []string{}
	}
	if sandboxed && s.Network == NetworkProxy {
		s.Env = withProxyEnv(s.Env)
		s.AllowTCPConnect = append(slices.Clone(s.AllowTCPConnect), ProxyPort)
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.OutputMax <= 0 {
		s.OutputMax = DefaultOutputMax
	}
	if s.KillAfterOutput <= 0 {
		s.KillAfterOutput = max(64*int64(s.OutputMax), 4<<20)
	}
	if s.FileSizeMax <= 0 {
		s.FileSizeMax = DefaultFileSizeMax
	}
	if s.TmpSize <= 0 {
		s.TmpSize = DefaultTmpSize
	}
	if s.PidsMax <= 0 {
		s.PidsMax = DefaultPidsMax
	}
	if s.MemoryMax <= 0 {
		s.MemoryMax = DefaultMemoryMax
	}
	return s, nil
}

// checkHome validates Spec.Home: a folder directly beneath the private
// /tmp that no root holds or lies beneath (its contents would otherwise
// reach the host, or a root's be hidden under it).
func checkHome(home string, roots []string, sandboxed bool) error {
	switch {
	case !sandboxed:
		return fmt.Errorf("home %q: a private home needs the sandbox", home)
	case filepath.Clean(home) != home || filepath.Dir(home) != "/tmp" || home == "/tmp":
		return fmt.Errorf("home %q is not a folder directly beneath /tmp", home)
	}
	for _, r := range roots {
		if isBeneath(home, r) || isBeneath(r, home) {
			return fmt.Errorf("home %q overlaps the root %q", home, r)
		}
	}
	return nil
}

// PrivateHome returns a folder for Spec.Home that none of roots holds or
// lies beneath, or "" when there is none (a root is /tmp, or holds it).
func PrivateHome(roots []string) string {
	for _, name := range []string{"home", "onellm-home", "onellm-home-2", "onellm-home-3"} {
		p := "/tmp/" + name
		if checkHome(p, roots, true) == nil {
			return p
		}
	}
	return ""
}

// within reports whether p is one of roots or beneath one (lexically).
func within(p string, roots []string) bool {
	for _, r := range roots {
		if isBeneath(p, r) {
			return true
		}
	}
	return false
}

func isBeneath(p, root string) bool {
	if p == root || root == "/" {
		return true
	}
	return strings.HasPrefix(p, root+"/")
}

// withProxyEnv replaces any proxy variable of env with ProxyEnv.
func withProxyEnv(env []string) []string {
	add := ProxyEnv()
	out := make([]string, 0, len(env)+len(add))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		replaced := false
		for _, a := range add {
			if strings.HasPrefix(a, k+"=") {
				replaced = true
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return append(out, add...)
}
