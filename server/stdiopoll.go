package server

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// pollableReader returns a reader of the same pipe as f that the Go
// runtime's poller waits on, and a func that closes it; f itself when f is
// not a pipe or cannot be reopened so.
//
// A read of a blocking pipe holds an OS thread in the system call for as
// long as the client is quiet; the runtime's monitor then takes that
// thread's processor away and, when the data comes, the thread must get
// one back: two thread hand-offs per message, which cost most when four
// servers share two cores. A pipe reopened through /proc/self/fd is a new
// open file description of the same pipe, so making it non-blocking
// changes nothing for anyone else holding the client's descriptor (the
// host, a shell); the original descriptor stays open and unread.
func pollableReader(f *os.File) (*os.File, func(), error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return f, func() {}, nil
	}
	// Only a read-only end: a reopened read end beside a descriptor that
	// can write the pipe (a pipe's write end handed over as stdin, a FIFO
	// opened read-write) would never see end-of-file, since this process
	// would hold a writer itself.
	if flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0); err != nil || flags&unix.O_ACCMODE != unix.O_RDONLY {
		return f, func() {}, nil
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return f, func() {}, nil // no /proc: the blocking descriptor serves
	}
	var re unix.Stat_t
	if err := unix.Fstat(fd, &re); err != nil || re.Dev != st.Dev || re.Ino != st.Ino {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("stdin: /proc/self/fd/%d is not the pipe it names", f.Fd())
	}
	p := os.NewFile(uintptr(fd), f.Name())
	return p, func() { p.Close() }, nil
}
