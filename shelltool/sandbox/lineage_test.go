package sandbox

import "testing"

// TestLineage: each exec is numbered; a process's first exec names its
// maker's image at the fork (not the maker's later one), a re-exec the
// image it replaces; a new process whose fork is not reported yet is held
// until it is; a thread's fork counts as its process's; an exited PID,
// used again, knows nothing of its last owner.
func TestLineage(t *testing.T) {
	const shell = 10
	l := newLineage(shell)
	exec := func(pid int) ExecEvent {
		var ev ExecEvent
		l.exec(pid, &ev)
		return ev
	}
	type want struct{ exec, prev, ppid, parent uint64 }
	check := func(name string, ev ExecEvent, w want) {
		t.Helper()
		if got := (want{ev.Exec, ev.PrevExec, uint64(ev.PPID), ev.ParentExec}); got != w {
			t.Errorf("%s: %+v, want %+v", name, got, w)
		}
	}
	if l.firstStop(shell) {
		t.Fatal("the shell is held")
	}
	check("shell's exec", exec(shell), want{1, 0, 0, 0})
	// 11 is made by the shell; its first stop comes first: held.
	if !l.firstStop(11) {
		t.Fatal("a process whose fork is unreported runs")
	}
	if !l.madeBy(shell, 11, false) {
		t.Fatal("the held process is not released by its fork")
	}
	if l.madeBy(shell, 12, false) || l.firstStop(12) {
		t.Fatal("a process whose fork is reported is held")
	}
	check("first exec", exec(11), want{2, 0, shell, 1})
	check("re-exec", exec(11), want{3, 2, shell, 1})
	// The shell execs again after making 12: 12 keeps the image it was made by.
	check("maker's re-exec", exec(shell), want{4, 1, 0, 0})
	check("made before it", exec(12), want{5, 0, shell, 1})
	// A thread of 11 makes 13: 13's maker is 11, at its image 3.
	l.madeBy(11, 20, true)
	l.madeBy(20, 13, false)
	check("made by a thread", exec(13), want{6, 0, 11, 3})
	// A process made by 14, which never exec'd: its maker's image is unknown.
	l.madeBy(shell, 14, false)
	l.madeBy(14, 15, false)
	check("maker not exec'd", exec(15), want{7, 0, 14, 0})
	// 11 exits; a new 11 made by 12 knows nothing of the old one.
	l.exited(11)
	l.madeBy(12, 11, false)
	check("reused PID", exec(11), want{8, 0, 12, 5})
	l.exited(20)
	if _, ok := l.group[20]; ok {
		t.Error("an exited thread is kept")
	}
}
