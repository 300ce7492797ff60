package sandbox

// lineage is what the tracer knows of where each process's program came
// from: the number of the exec event that loaded its image (one count per
// command, from 1) and, for a process not yet exec'd since it was made,
// the image of the process that made it, as it was when it did. The exec
// gate reads it from the event (ExecEvent.Exec, PrevExec, ParentExec): a
// program git runs for an approved push may be decided as part of that
// push, and only one that git's own code started (its image, not a
// process that was something else when it forked and became git since).
//
// Every entry is a live process's (or thread's): the tracer sees each
// traced process's exit before its PID can be used again (exited), so a
// reused PID never finds the last owner's image.
type lineage struct {
	next uint64
	// image is a process's current image (by its PID, the thread group's),
	// when it was exec'd under the tracer.
	image map[int]uint64
	// made is who made a process or thread (reported by its maker's fork,
	// vfork or clone event): the maker's process and image then.
	made map[int]maker
	// group is the process a thread belongs to (a clone event's child is
	// taken as a thread of its maker: what it runs is the maker's image
	// until it execs).
	group map[int]int
	// held are new processes stopped at their first stop before their
	// maker's event was reported: continued once it is (release), so no
	// process runs, or execs, with its maker unknown.
	held map[int]bool
}

// maker is the process that made one, and its image at the time.
type maker struct {
	pid   int
	image uint64
}

func newLineage(shell int) lineage {
	l := lineage{image: map[int]uint64{}, made: map[int]maker{}, group: map[int]int{}, held: map[int]bool{}}
	l.made[shell] = maker{} // seized, made by no traced process
	return l
}

// process is the process the thread tid belongs to.
func (l *lineage) process(tid int) int {
	if g, ok := l.group[tid]; ok {
		return g
	}
	return tid
}

// madeBy records that parent (a thread) made child, by clone when thread
// (a thread or a clone-made process: its maker's image either way), and
// reports whether child was held waiting for it (the caller continues it).
func (l *lineage) madeBy(parent, child int, thread bool) (release bool) {
	p := l.process(parent)
	l.made[child] = maker{pid: p, image: l.image[p]}
	if thread {
		l.group[child] = p
	}
	if l.held[child] {
		delete(l.held, child)
		return true
	}
	return false
}

// firstStop reports whether pid, at a stop that may be a new process's
// first (PTRACE_EVENT_STOP with SIGTRAP), must be held: its maker's event
// has not been reported yet.
func (l *lineage) firstStop(pid int) (hold bool) {
	if _, ok := l.made[pid]; ok {
		return false
	}
	l.held[pid] = true
	return true
}

// exec numbers the exec event of pid (the process's PID: the kernel
// reports an exec by any thread under it) and fills in its lineage.
func (l *lineage) exec(pid int, ev *ExecEvent) {
	l.next++
	m := l.made[pid]
	ev.Exec, ev.PrevExec, ev.PPID, ev.ParentExec = l.next, l.image[pid], m.pid, m.image
	l.image[pid] = l.next
	delete(l.group, pid) // the process's own program from now on
}

// exited forgets pid (a process or a thread).
func (l *lineage) exited(pid int) {
	delete(l.image, pid)
	delete(l.made, pid)
	delete(l.group, pid)
	delete(l.held, pid)
}
