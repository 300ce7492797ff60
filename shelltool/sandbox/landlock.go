//go:build linux

package sandbox

import (
	"fmt"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Raw landlock, so the ruleset is pinned to exactly the ABI found: no
// best-effort downgrade can end up enforcing nothing.

const (
	llFsABI1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	llFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	llRead    = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llReadExe = llRead | unix.LANDLOCK_ACCESS_FS_EXECUTE
	// llDevRW is for /dev/null and friends.
	llDevRW = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	llRuleNetPort = 2
	// maxKnownABI is the newest ABI whose rights this package handles. A
	// newer kernel is used at this level (its extra rights stay unhandled).
	maxKnownABI = 7
)

// llRulesetAttr is struct landlock_ruleset_attr up to ABI 7 (24 bytes).
type llRulesetAttr struct {
	handledFs  uint64
	handledNet uint64
	scoped     uint64
}

type llNetPortAttr struct {
	allowed uint64
	port    uint64
}

// LandlockABI is the landlock ABI the running kernel offers (the one probe,
// for the sandbox and for `onellm-mcp version`).
func LandlockABI() (int, error) { return landlockABI() }

func landlockABI() (int, error) {
	r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// ruleset is a landlock ruleset being built, pinned to abi.
type ruleset struct {
	fd      int
	abi     int
	fsAll   uint64 // rights handled (and thus grantable)
	netAll  uint64
	scoped  uint64
	skipped []string // paths that did not exist
}

func newRuleset(abi int, denyTCP bool) (*ruleset, error) {
	if abi < 1 {
		return nil, fmt.Errorf("landlock ABI %d", abi)
	}
	eff := min(abi, maxKnownABI)
	fs := uint64(llFsABI1)
	if eff >= 2 {
		fs |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if eff >= 3 {
		fs |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if eff >= 5 {
		fs |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	var net, scoped uint64
	if eff >= 4 && denyTCP {
		net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if eff >= 6 {
		scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	attr := llRulesetAttr{handledFs: fs, handledNet: net, scoped: scoped}
	size := unsafe.Sizeof(attr)
	switch {
	case eff < 4:
		size = 8
	case eff < 6:
		size = 16
	}
	r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	return &ruleset{fd: int(r), abi: eff, fsAll: fs, netAll: net, scoped: scoped}, nil
}

func (rs *ruleset) close() { unix.Close(rs.fd) }

// addPath grants access beneath path (following symlinks). A missing path is
// skipped; other errors are returned.
func (rs *ruleset) addPath(path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOENT || err == unix.ENOTDIR || err == unix.ELOOP {
			rs.skipped = append(rs.skipped, path)
			return nil
		}
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	return rs.addFd(fd, path, access)
}

// addPaths grants access beneath each of paths (addPath).
func (rs *ruleset) addPaths(paths []string, access uint64) error {
	for _, p := range paths {
		if err := rs.addPath(p, access); err != nil {
			return step("landlock rule", err)
		}
	}
	return nil
}

func (rs *ruleset) addFd(fd int, path string, access uint64) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("fstat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= llFileRights
	}
	return rs.addRule(fd, path, access)
}

// addRule adds a path-beneath rule; access must suit the file type.
func (rs *ruleset) addRule(fd int, path string, access uint64) error {
	access &= rs.fsAll
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs.fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", path, e)
	}
	return nil
}

func (rs *ruleset) addTCPConnect(port uint16) error {
	if rs.netAll == 0 {
		return nil
	}
	attr := llNetPortAttr{allowed: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(port)}
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs.fd), llRuleNetPort, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("landlock_add_rule tcp %d: %w", port, e)
	}
	return nil
}

func (rs *ruleset) restrictSelf() error {
	_, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs.fd), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// systemReadExec are read+execute beneath (when they exist).
func systemReadExec() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}
}

// systemRead are read-only (no execute). /proc is too, but its rule is
// added once the namespace's own /proc is mounted (buildRuleset).
func systemRead() []string {
	return []string{
		"/sys/devices/system/cpu", "/sys/fs/cgroup", "/sys/kernel/mm/transparent_hugepage",
		"/usr/share/zoneinfo",
	}
}

// SystemRoots are the folders every sandboxed command may read beyond its
// own roots (system folders, /etc minus its hidden secrets, /proc, /dev):
// what the server keeps for itself must lie beneath none of them.
func SystemRoots() []string {
	return slices.Concat(systemReadExec(), systemRead(), []string{"/proc", "/etc", "/dev"})
}

// devRW are device files opened for reading and writing.
func devRW() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}
}

// etcSecrets are paths relative to /etc masked by the /etc overlay
// (hidden.go; a trailing "*" makes a prefix pattern, expanded when the
// helper starts). Tests replace /etc and this list through
// helperSpec.EtcDir and EtcSecrets; production always uses these.
func etcSecrets() []string {
	return []string{
		"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d",
		"ssh/ssh_host_*", "ssh/sshd_config", "ssh/sshd_config.d",
		"ssl/private", "pki/tls/private", "pki/CA/private", "letsencrypt",
		"security/opasswd", "krb5.keytab", "ipsec.secrets", "ipsec.d",
		"ppp/chap-secrets", "ppp/pap-secrets", "NetworkManager/system-connections",
		"wireguard", "openvpn", "credstore", "credstore.encrypted",
		"mysql/debian.cnf", "libvirt/secrets", "docker/key.json", "apache2/ssl",
		"nginx/ssl", "lighttpd/ssl", "cups/ssl", "postfix/sasl_passwd",
		".pwd.lock", "polkit-1/localauthority",
	}
}
