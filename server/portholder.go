package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/onellm/onellm-mcp/internal/display"
)

// portHolder names what listens on a TCP address, for the approval
// console's error when that is not an onellm-mcp console of this user: the
// listening socket from /proc/net/tcp{,6} (its owner's uid), then the
// process holding it when this user may see its descriptors. "" when
// nothing is found. The holder's name is its own choice (comm), so it is
// escaped: it goes into an error line on stderr.
func portHolder(addr string) string {
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
	if pid, comm := socketProcess(inode); pid != "" {
		return fmt.Sprintf("pid %s (%s, %s)", pid, display.Escape(comm), who)
	}
	return "a process of " + who
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

// socketProcess finds a process with a descriptor on socket inode, among
// those whose descriptors this user may read.
func socketProcess(inode string) (pid, comm string) {
	target := "socket:[" + inode + "]"
	procs, _ := filepath.Glob("/proc/[0-9]*/fd")
	for _, fdDir := range procs {
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && link == target {
				p := filepath.Base(filepath.Dir(fdDir))
				name, _ := os.ReadFile(filepath.Join("/proc", p, "comm"))
				return p, strings.TrimSuffix(string(name), "\n")
			}
		}
	}
	return "", ""
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
