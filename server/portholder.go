package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/onellm/onellm-mcp/internal/display"
)

// portHolders names what listens on a TCP address, for the approval
// console's error when that is not an onellm-mcp console of this user: the
// listening socket from /proc/net/tcp{,6} (its owner's uid), then the
// process holding it when this user may see its descriptors. "" when
// nothing is found. The holder's name is its own choice (comm), so it is
// escaped: it goes into an error line on stderr.
//
// The console asks again at each retry (every few seconds for as long as
// the address is held), and finding the process means reading every
// process's descriptors. So the last holder found is kept: while the same
// socket (inode) listens and that process still has a descriptor on it,
// only its own descriptors are read. Another socket on the port, or the
// socket in another process's hands, is found by a full scan again.
type portHolders struct {
	mu         sync.Mutex
	inode, pid string // the last holder found
	scans      int    // full scans of /proc (tests)
}

// name is the holder of addr, as described on portHolders.
func (h *portHolders) name(addr string) string {
	_, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return ""
	}
	uid, inode, ok := listener(uint16(port))
	if !ok {
		return ""
	}
	who := "uid " + uid
	if uid == strconv.Itoa(os.Geteuid()) {
		who = "this user"
	}
	if pid := h.process(inode); pid != "" {
		comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm"))
		return fmt.Sprintf("pid %s (%s, %s)", pid, display.Escape(strings.TrimSuffix(string(comm), "\n")), who)
	}
	return "a process of " + who
}

// process is a pid with a descriptor on socket inode: the last one found
// when it still has one, else the first a full scan finds.
func (h *portHolders) process(inode string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	target := "socket:[" + inode + "]"
	if h.inode == inode && h.pid != "" && holds(h.pid, target) {
		return h.pid
	}
	h.scans++
	h.inode, h.pid = inode, ""
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range procs {
		if pid := filepath.Base(dir); holds(pid, target) {
			h.pid = pid
			break
		}
	}
	return h.pid
}

// listener finds the listening TCP socket on port: its owner's uid and
// inode.
func listener(port uint16) (uid, inode string, ok bool) {
	want := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
			if len(f) >= 10 && strings.HasSuffix(f[1], want) && f[3] == "0A" {
				return f[7], f[9], true
			}
		}
	}
	return "", "", false
}

// holds reports whether process pid has a descriptor on target (a
// "socket:[INODE]" link), among those this user may read.
func holds(pid, target string) bool {
	fdDir := filepath.Join("/proc", pid, "fd")
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && link == target {
			return true
		}
	}
	return false
}

// parentName is the name of the process that started this server (the
// host: claude, cursor, node, …), to label its asks on a shared console.
func parentName() string {
	name, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(os.Getppid()), "comm"))
	if err != nil {
		return ""
	}
	if s := strings.TrimSpace(string(name)); s != "" {
		return "under " + s
	}
	return ""
}
