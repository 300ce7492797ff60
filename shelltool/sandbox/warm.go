//go:build linux

package sandbox

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Runner runs sandboxed commands like Run, but keeps one helper per network
// mode started in advance ("warm"): already past the binary's package
// initialisers, in its fresh namespaces, blocked reading its spec. A
// command then pays only for the sandbox setup and the shell. A warm helper
// is started exactly as Run starts its helper (same function: pipes,
// socketpair for NetworkProxy, clone flags, Setsid, Pdeathsig SIGKILL,
// fixed environment, per-command cgroup when available); the spec is written
// to it only when a command arrives, and from then on the command is driven
// by the same code as Run's. The only difference is when the process was
// started (its mount namespace is a copy of the server's taken then: a mount
// made on the host afterwards reaches it only through shared propagation).
//
// When a warm helper is handed out the next one for that mode is started
// in the background, so at most one helper per mode is idle or on its way.
// (Starting it when the command had started or ended instead, so it would
// not compete with the command on two cores, was measured: with the
// helper binary a start costs ~1 ms of CPU and overlaps the command on the
// other core, while a later start lands on the next command's path when
// calls come back to back: `true` back to back took 8-16 ms median at
// hand-out, 12-23 ms from the shell's start, 17-25 ms from the end; spaced
// calls did not differ.) A command that finds its mode's helper on its way
// (requested, not yet started) waits for it, which is never longer than
// starting one itself; a command that finds none (concurrent commands
// beyond the idle helper, or the first of a mode that was not named to
// NewRunner) runs cold. A warm helper found dead (or whose spec cannot be
// written) is discarded and the command starts cold; nothing ever runs
// outside the sandbox.
//
// Helpers are started from one goroutine locked to its OS thread for the
// Runner's life: Pdeathsig fires when the thread that started a process
// exits, and a locked thread is never taken over (nor ended) by other code.
//
// A Runner is safe for concurrent use; concurrent commands beyond the idle
// helpers run cold. Close kills the idle helpers; commands running then
// finish normally, and Run after Close runs cold.
type Runner struct {
	prog   *HelperProgram // what every helper, warm or cold, is started from
	mu     sync.Mutex
	closed bool
	slots  map[Network]*warmSlot

	warmRuns atomic.Int64 // commands driven on a warm helper (tests)

	reqs chan Network  // modes to start a helper for (spawner)
	quit chan struct{} // closed by Close
	done chan struct{} // closed when the spawner returned
}

type warmSlot struct {
	idle     *launched // nil when none is ready
	spawning bool      // a start is requested or under way
	// ready is closed when the start requested last is over (sl.idle is
	// then set, or the start failed); nil before the first request.
	ready chan struct{}
}

var runnerModes = []Network{NetworkNone, NetworkFull, NetworkProxy}

// NewRunner returns a Runner whose helpers are the running binary
// (NewRunnerWith).
func NewRunner(prewarm ...Network) *Runner { return NewRunnerWith(SelfHelper(), prewarm...) }

// NewRunnerWith returns a Runner whose helpers start from prog and starts
// a warm helper for each mode in prewarm (unknown modes are ignored) in
// the background.
func NewRunnerWith(prog *HelperProgram, prewarm ...Network) *Runner {
	r := &Runner{
		prog:  prog,
		slots: make(map[Network]*warmSlot, len(runnerModes)),
		reqs:  make(chan Network, len(runnerModes)),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	for _, m := range runnerModes {
		r.slots[m] = &warmSlot{}
	}
	go r.spawner()
	r.mu.Lock()
	for _, m := range prewarm {
		if m == "" {
			m = NetworkNone
		}
		if sl := r.slots[m]; sl != nil {
			r.requestLocked(m, sl)
		}
	}
	r.mu.Unlock()
	return r
}

// requestLocked asks the spawner for a helper for mode m unless one is
// idle or on its way. r.mu is held.
func (r *Runner) requestLocked(m Network, sl *warmSlot) {
	if r.closed || sl.idle != nil || sl.spawning {
		return
	}
	sl.spawning = true
	sl.ready = make(chan struct{})
	r.reqs <- m // buffered for every mode; at most one request per mode
}

// spawnedLocked ends the start of a slot's helper (st nil: it failed, or
// it is not wanted any more) and wakes the commands waiting for it. r.mu is
// held.
func (r *Runner) spawnedLocked(sl *warmSlot, st *launched) {
	sl.spawning = false
	sl.idle = st
	close(sl.ready)
}

// spawner starts the requested helpers from its own locked OS thread.
func (r *Runner) spawner() {
	runtime.LockOSThread()
	// Unlocked on return: the thread must outlive the helpers it started
	// (Pdeathsig), so it goes back to the runtime instead of exiting.
	defer runtime.UnlockOSThread()
	defer close(r.done)
	for {
		var m Network
		select {
		case <-r.quit:
			return
		case m = <-r.reqs:
		}
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		var st *launched
		if !closed {
			st, _ = startHelper(r.prog, m, DefaultPidsMax, DefaultMemoryMax)
		}
		if st != nil {
			st.warm = true
		}
		r.mu.Lock()
		sl := r.slots[m]
		if r.closed || st == nil {
			// A failed start leaves the slot empty: the next command runs
			// cold and asks again.
			r.spawnedLocked(sl, nil)
			r.mu.Unlock()
			if st != nil {
				st.discard()
			}
			continue
		}
		r.spawnedLocked(sl, st)
		r.mu.Unlock()
	}
}

// take returns the idle helper for mode m, waiting for the one on its way
// if there is one (until ctx ends), or nil; either way it asks for the
// next.
func (r *Runner) take(ctx context.Context, m Network) *launched {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if r.closed {
			return nil
		}
		sl := r.slots[m]
		if !sl.spawning || sl.idle != nil || ctx.Err() != nil {
			st := sl.idle
			sl.idle = nil
			r.requestLocked(m, sl)
			return st
		}
		ready := sl.ready
		r.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
		}
		r.mu.Lock()
	}
}

// Run runs s under the sandbox exactly as the package-level Run does, on a
// warm helper when one is idle for s.Network.
func (r *Runner) Run(ctx context.Context, s Spec) (Result, error) {
	n, err := normalize(s, true)
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if st := r.take(ctx, n.Network); st != nil {
		if res, ok, err := runWarm(ctx, &n, st); ok {
			r.warmRuns.Add(1)
			return res, err
		}
	}
	return execute(ctx, &n, r.prog)
}

// runWarm drives st for s; ok is false when st turned out unusable and
// nothing ran (the caller starts the command cold).
func runWarm(ctx context.Context, s *Spec, st *launched) (res Result, ok bool, err error) {
	if st.exited() {
		st.discard()
		return Result{}, false, nil
	}
	if st.cg != nil && (st.pidsMax != s.PidsMax || st.memoryMax != s.MemoryMax) {
		// Still before the spec is sent: nothing runs under the old limits.
		if st.cg.setLimits(s.PidsMax, s.MemoryMax) != nil {
			st.discard()
			return Result{}, false, nil
		}
	}
	st.start = time.Now()
	res, err = drive(ctx, s, st)
	if errors.Is(err, errWarmDead) {
		return Result{}, false, nil
	}
	return res, true, err
}

// Close kills the idle helpers and stops the Runner's goroutine. Commands
// running continue to their end. Idempotent.
func (r *Runner) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.done
		return
	}
	r.closed = true
	close(r.quit)
	r.mu.Unlock()
	<-r.done
	r.mu.Lock()
	var idle []*launched
	for _, sl := range r.slots {
		if sl.idle != nil {
			idle = append(idle, sl.idle)
			sl.idle = nil
		}
		if sl.spawning {
			// A request the spawner left: a command waiting for it
			// (take) goes on, and runs cold.
			r.spawnedLocked(sl, nil)
		}
	}
	r.mu.Unlock()
	for _, st := range idle {
		st.discard()
	}
}
