//go:build linux

package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cgroup is a per-command cgroup v2 the helper is cloned into.
type cgroup struct {
	dir    string
	fd     int
	memory bool // memory.max is set
}

// newCgroup makes a child of the server's own cgroup when it is on a
// writable cgroup2 mount that delegates the pids controller. Any failure
// means "run without a cgroup".
func newCgroup(pidsMax int, memoryMax int64) (*cgroup, error) {
	parent, has, err := cgroupParent()
	if err != nil {
		return nil, err
	}
	if !has("pids") {
		return nil, fmt.Errorf("pids controller not delegated in %s", parent)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	dir := filepath.Join(parent, "onellm-sbx-"+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	cg := &cgroup{dir: dir, fd: -1}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(pidsMax)), 0); err != nil {
		cg.remove()
		return nil, err
	}
	if has("memory") {
		cg.memory = true
		if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(memoryMax, 10)), 0); err != nil {
			cg.remove()
			return nil, err
		}
		_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		cg.remove()
		return nil, err
	}
	cg.fd = fd
	return cg, nil
}

// setLimits rewrites pids.max (and memory.max when set) of a cgroup made
// in advance for a warm helper, before its command is sent.
func (cg *cgroup) setLimits(pidsMax int, memoryMax int64) error {
	if err := os.WriteFile(filepath.Join(cg.dir, "pids.max"), []byte(strconv.Itoa(pidsMax)), 0); err != nil {
		return err
	}
	if cg.memory {
		return os.WriteFile(filepath.Join(cg.dir, "memory.max"), []byte(strconv.FormatInt(memoryMax, 10)), 0)
	}
	return nil
}

// cgroupParent finds the server's own cgroup on a cgroup2 mount and the
// controllers it delegates to children.
func cgroupParent() (parent string, has func(string) bool, err error) {
	root := ""
	for _, r := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st unix.Statfs_t
		if unix.Statfs(r, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			root = r
			break
		}
	}
	if root == "" {
		return "", nil, errors.New("no cgroup2 mount")
	}
	own, err := ownCgroup()
	if err != nil {
		return "", nil, err
	}
	parent = filepath.Join(root, own)
	ctl, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return "", nil, err
	}
	fields := strings.Fields(string(ctl))
	return parent, func(c string) bool { return slices.Contains(fields, c) }, nil
}

// CgroupLimits reports whether commands get a cgroup with a pids limit (and
// a memory limit), and why not.
func CgroupLimits() (pids, memory bool, err error) {
	parent, has, err := cgroupParent()
	if err != nil {
		return false, false, err
	}
	if !has("pids") {
		return false, false, fmt.Errorf("the pids controller is not delegated in %s", parent)
	}
	return true, has("memory"), nil
}

func ownCgroup() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("no cgroup2 entry in /proc/self/cgroup")
}

// kill kills every process in the cgroup (cgroup.kill, Linux 5.14+).
func (cg *cgroup) kill() {
	_ = os.WriteFile(filepath.Join(cg.dir, "cgroup.kill"), []byte("1"), 0)
}

// remove kills what is left and removes the cgroup (bounded retries while
// the killed processes go away).
func (cg *cgroup) remove() {
	if cg.fd >= 0 {
		unix.Close(cg.fd)
		cg.fd = -1
	}
	for i := 0; i < 50; i++ {
		err := unix.Rmdir(cg.dir)
		if err == nil || err == unix.ENOENT {
			return
		}
		if i == 0 {
			cg.kill()
		}
		time.Sleep(2 * time.Millisecond)
	}
}
