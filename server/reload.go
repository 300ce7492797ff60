package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/statedir"
)

// SetPolicy puts p in force for the calls that start from now on (a call in
// flight keeps the policy it loaded when it began) and, when the listed
// tools or their definitions change, replaces the tool list, which makes
// mcp-go send notifications/tools/list_changed. It reports whether the list
// changed.
func (s *Server) SetPolicy(p *grants.Policy) bool {
	s.policyMu.Lock()
	defer s.policyMu.Unlock()
	old := s.policy.Swap(p)
	s.startTools(p)
	next := s.serverTools(p)
	if old != nil && bytes.Equal(toolsSignature(s.serverTools(old)), toolsSignature(next)) {
		return false
	}
	s.mcp.SetTools(next...)
	return true
}

// toolsSignature is what a client sees of a tool list: the definitions in
// order.
func toolsSignature(tools []mcpserver.ServerTool) []byte {
	var b bytes.Buffer
	for _, t := range tools {
		j, err := json.Marshal(t.Tool)
		if err != nil {
			j = []byte(t.Tool.Name + "\x00unencodable")
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// reloadSettle is how long the config must stay unchanged after its last
// change before it is read: a writer that writes it in steps (a truncating
// write then an append, or several writes before the close) is never read
// half-way, so a config whose deny rule comes last never runs without it.
// A writer that pauses longer than this between steps can still be read
// half-way: the README tells people to write the config atomically.
const reloadSettle = time.Second

// WatchConfig watches the config file at path and, after each change,
// builds a policy with load (which must load and compile exactly as at
// start-up). inForce is the config text the policy in force was compiled
// from: when the file no longer holds it once the watch is set up (it
// changed between the load and the watch), that counts as a change. A good policy is put in force with SetPolicy; a bad one is
// refused and logged with the message `check` would print, and the policy in
// force stays. The folder is watched, not the file, because editors and
// config managers replace a file by renaming another over it. It returns
// when ctx ends; the error is for a watcher that cannot start.
//
// The watch is raw inotify on purpose: a folder watch that includes
// IN_MODIFY (as fsnotify's does) wakes the server on every write to any file
// there, and the config often sits beside the audit log or in the workspace,
// which are written on every call. Changes are seen on close, rename,
// create, delete and attribute changes instead.
func (s *Server) WatchConfig(ctx context.Context, path string, inForce []byte, load func() (*grants.Policy, error)) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("config reload: inotify: %w", err)
	}
	events := os.NewFile(uintptr(fd), "inotify")
	dirs := []string{filepath.Dir(abs)}
	// A config that is a symlink (a mounted config map, a dotfiles repo) also
	// changes when its target changes.
	if real, err := filepath.EvalSymlinks(abs); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	const mask = unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_CREATE |
		unix.IN_DELETE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	for _, d := range dirs {
		if _, err := unix.InotifyAddWatch(fd, d, mask); err != nil {
			events.Close()
			return fmt.Errorf("config reload: watching %s: %w", d, err)
		}
	}
	names := []string{filepath.Base(abs)}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		names = append(names, filepath.Base(real))
	}
	// The text in force is the one loaded, not what the file holds now: a
	// change made before the watch was set up is not taken for the text
	// in force and skipped, but handled as a change (after the watch is
	// set, so a later change is an event).
	last, lastMode := inForce, fileMode(abs)
	changes := make(chan struct{}, 1)
	if now, err := os.ReadFile(abs); err != nil || !bytes.Equal(now, last) {
		changes <- struct{}{}
	}
	go readInotify(events, names, changes)
	go func() {
		<-ctx.Done()
		events.Close() // ends readInotify, which closes changes
	}()
	go s.watchLoop(ctx, changes, abs, load, last, lastMode)
	return nil
}

// readInotify turns inotify events about the named files into signals on
// changes (coalesced), until the descriptor is closed.
func readInotify(f *os.File, names []string, changes chan<- struct{}) {
	defer close(changes)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := f.Read(buf)
		if err != nil {
			return
		}
		relevant := false
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameStart := off + unix.SizeofInotifyEvent
			nameEnd := min(nameStart+int(ev.Len), n)
			name := string(bytes.TrimRight(buf[nameStart:nameEnd], "\x00"))
			off = nameEnd
			if name == "" || slices.Contains(names, name) || isK8sSwap(name) {
				relevant = true // the folder itself, or the config
			}
		}
		if relevant {
			select {
			case changes <- struct{}{}:
			default:
			}
		}
	}
}

// watchLoop reloads the config once it has settled: after each change
// event it waits until the file's identity, size, times and mode have stayed
// the same for reloadSettle (so writes that send no event, such as a
// write(2) before the close, also hold it back), reads it, and applies the
// result only when the file did not change while it was read. last and
// lastMode are the config text in force (the one loaded) and the file's
// mode when the watch was set up, to skip events that changed neither.
func (s *Server) watchLoop(ctx context.Context, changes <-chan struct{}, abs string, load func() (*grants.Policy, error), last []byte, lastMode os.FileMode) {
	timer := time.NewTimer(reloadSettle)
	timer.Stop()
	defer timer.Stop()
	var seen fileState // the file as it was when the settle period began
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-changes:
			if !ok {
				return
			}
			seen = statFile(abs)
			timer.Reset(reloadSettle)
		case <-timer.C:
			if now := statFile(abs); now != seen {
				seen = now // still being written: wait for another quiet period
				timer.Reset(reloadSettle)
				continue
			}
			b, err := os.ReadFile(abs)
			mode := fileMode(abs)
			if err == nil && bytes.Equal(b, last) && mode == lastMode {
				continue
			}
			p, loadErr := load()
			if now := statFile(abs); now != seen {
				seen = now // changed while being read: what was read may be half
				timer.Reset(reloadSettle)
				continue
			}
			s.apply(p, loadErr)
			if err == nil {
				last, lastMode = b, mode
			}
		}
	}
}

// fileState is what changes when a file is written, replaced, moved or
// re-permissioned.
type fileState struct {
	dev, ino, size uint64
	mtime, ctime   unix.Timespec
	mode, uid      uint32
	err            bool
}

func statFile(path string) fileState {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileState{err: true}
	}
	return fileState{dev: st.Dev, ino: st.Ino, size: uint64(st.Size), mtime: st.Mtim, ctime: st.Ctim, mode: st.Mode, uid: st.Uid}
}

// isK8sSwap spots the "..data" symlink swap of a mounted config map.
func isK8sSwap(name string) bool { return filepath.Base(name) == "..data" }

func fileMode(path string) os.FileMode {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Mode()
}

// reload builds the next policy and puts it in force, or refuses it.
func (s *Server) reload(load func() (*grants.Policy, error)) {
	p, err := load()
	s.apply(p, err)
}

// apply puts a reloaded policy in force, or logs why it is refused; a
// change that weakens the policy is logged with what it opens.
func (s *Server) apply(p *grants.Policy, err error) {
	if err != nil {
		s.log.Printf("config change refused, the policy in force stays: %v", err)
		return
	}
	// The audit log is opened once; a policy naming another audit.path
	// would no longer protect the log actually written (protected_path), so
	// such a change is refused until a restart applies it.
	if inUse := s.audit.Path(); p.AuditPath != inUse {
		s.log.Printf("config change refused, the policy in force stays: audit.path changed to %s; the audit log stays at %s, restart to move it", p.AuditPath, inUse)
		return
	}
	// What the server keeps in its state folder stays out of every tool's
	// reach: a change that would open a root over it waits for a restart,
	// which refuses it too.
	if s.stateDir != "" {
		if err := statedir.Reachable(s.stateDir, ReadableRoots(p)); err != nil {
			s.log.Printf("config change refused, the policy in force stays: %v", err)
			return
		}
	}
	if old := s.policy.Load(); old != nil && p.Telemetry != old.Telemetry {
		s.log.Printf("config change: the [telemetry] settings apply at the next restart")
	}
	if p.Audit != s.audit.settings {
		s.log.Printf("config change: the [audit] record bound and checkpoint settings apply at the next restart")
	}
	if old := s.policy.Load(); old != nil {
		if weaker := grants.Weakenings(old, p); len(weaker) > 0 {
			s.log.Printf("config change weakens the policy: %s", strings.Join(weaker, "; "))
		}
	}
	changed := s.SetPolicy(p)
	what := "tool list unchanged"
	if changed {
		what = "tool list changed, clients notified"
	}
	s.log.Printf("config reloaded: profile %s, mode %s, workspace %s (%s)", p.Profile, p.Mode, p.Workspace, what)
}
