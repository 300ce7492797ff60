package shelltool

import (
	"slices"

	"github.com/onellm/onellm-mcp/shelltool/cmdline"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
)

// optionPipedCode is the option of the critical request the exec gate adds
// for a program that completes a flow from a network program into one that
// reads its code at run time (pipeFlow).
const optionPipedCode = "a download piped into a program that reads its code from it (curl | sh, across programs)"

// pipeRole is what an exec event's program is to pipeFlow: one that talks
// to the network (what it writes may be a download), one that reads the
// code it runs at run time (a shell or interpreter with no script operand,
// or one named /dev/stdin or /dev/fd/N: cmdline's Program), or neither.
type pipeRole struct {
	downloads, readsCode bool
}

// roleOf is the role of a program whose analysis is commands.
func roleOf(commands []cmdline.Command) pipeRole {
	var r pipeRole
	for _, c := range commands {
		r.downloads = r.downloads || c.Network
		r.readsCode = r.readsCode || c.Name == cmdline.Dynamic && c.Program != ""
	}
	return r
}

// pipeFlow follows, through one call's pipes, what a network program wrote
// (review rev20d L1): on a line `curl … | sh` is critical, but a script's
// pipeline reaches the gate as two programs, each harmless by its words.
// Every program let run adds its pipes (sandbox.ExecEvent: descriptor 0
// and those argv names are read, 1 and those argv names written). A pipe
// is tainted when a network program, or a program reading a tainted pipe,
// writes it (curl | base64 -d | sh); a pipe feeds code when a program that
// reads its code reads it, or a program that writes a pipe feeding code
// reads it. A program that would join the two (a code reader reading a
// tainted pipe, or a writer of a pipe that feeds code that downloads or
// reads a tainted one) is critical: whichever of them execs last is
// killed, so the order the pipeline's programs start in does not matter.
// What it does not see: a shell's own reading of a pipe (eval "$(curl …)"
// runs in the shell that reads it, with no exec), files (curl -o x; sh x).
// Past maxPipeEdges programs with pipes, every code reader reading a pipe
// is critical (fail closed).
type pipeFlow struct {
	tainted, feeds map[uint64]bool
	edges          []pipeEdge
	full           bool
}

// pipeEdge is one program's flow: from the pipes it reads into those it
// writes.
type pipeEdge struct{ in, out []uint64 }

// maxPipeEdges bounds the programs with pipes a call's flow holds.
const maxPipeEdges = 4096

// pipesOf are the pipes ev's program reads and writes.
func pipesOf(ev *sandbox.ExecEvent) (in, out []uint64) {
	if ev.StdinPipe != 0 {
		in = append(in, ev.StdinPipe)
	}
	if ev.StdoutPipe != 0 {
		out = append(out, ev.StdoutPipe)
	}
	return append(in, ev.ArgPipes...), append(out, ev.ArgPipes...)
}

// joins reports whether the program with role and pipes in, out would
// complete a flow from a download into code.
func (f *pipeFlow) joins(role pipeRole, in, out []uint64) bool {
	if role.readsCode && len(in) > 0 && f.full {
		return true
	}
	source := role.downloads || slices.ContainsFunc(in, f.isTainted)
	sink := role.readsCode && len(in) > 0 || slices.ContainsFunc(out, f.feedsCode)
	return source && sink
}

func (f *pipeFlow) isTainted(p uint64) bool { return f.tainted[p] }
func (f *pipeFlow) feedsCode(p uint64) bool { return f.feeds[p] }

// add records the program with role and pipes in, out, let run.
func (f *pipeFlow) add(role pipeRole, in, out []uint64) {
	if len(in)+len(out) == 0 || f.full {
		return
	}
	if f.tainted == nil {
		f.tainted, f.feeds = map[uint64]bool{}, map[uint64]bool{}
	}
	if len(in) > 0 && len(out) > 0 {
		if len(f.edges) >= maxPipeEdges {
			f.full = true
			return
		}
		f.edges = append(f.edges, pipeEdge{in: in, out: out})
	}
	if role.downloads || slices.ContainsFunc(in, f.isTainted) {
		f.mark(f.tainted, out, func(e pipeEdge) ([]uint64, []uint64) { return e.in, e.out })
	}
	if role.readsCode || slices.ContainsFunc(out, f.feedsCode) {
		f.mark(f.feeds, in, func(e pipeEdge) ([]uint64, []uint64) { return e.out, e.in })
	}
}

// mark sets pipes in set, and what flows from them along the edges (from,
// to as dir gives them), to a fixed point.
func (f *pipeFlow) mark(set map[uint64]bool, pipes []uint64, dir func(pipeEdge) (from, to []uint64)) {
	todo := slices.Clone(pipes)
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if set[p] {
			continue
		}
		set[p] = true
		for _, e := range f.edges {
			if from, to := dir(e); slices.Contains(from, p) {
				todo = append(todo, to...)
			}
		}
	}
}
