package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/grants"
)

// setPolicyMu serialises policy swaps, so the listed tools always match the
// last policy stored.
var setPolicyMu sync.Mutex

// SetPolicy puts p in force for the calls that start from now on (a call in
// flight keeps the policy it loaded when it began) and, when the listed
// tools or their definitions change, replaces the tool list, which makes
// mcp-go send notifications/tools/list_changed. It reports whether the list
// changed.
func (s *Server) SetPolicy(p *grants.Policy) bool {
	setPolicyMu.Lock()
	defer setPolicyMu.Unlock()
	old := s.policy.Swap(p)
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

// reloadDebounce is how long the watcher waits for a burst of file events
// (an editor's write, rename and chmod) to end before reloading.
const reloadDebounce = 150 * time.Millisecond

// WatchConfig watches the config file at path and, after each change,
// builds a policy with load (which must load and compile exactly as at
// start-up). A good policy is put in force with SetPolicy; a bad one is
// refused and logged with the message `check` would print, and the policy in
// force stays. The folder is watched, not the file, because editors and
// config managers replace a file by renaming another over it. It returns
// when ctx ends; the error is for a watcher that cannot start.
func (s *Server) WatchConfig(ctx context.Context, path string, load func() (*grants.Policy, error)) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("config reload: %w", err)
	}
	dirs := []string{filepath.Dir(abs)}
	// A config that is a symlink (a mounted config map, a dotfiles repo) also
	// changes when its target changes.
	if real, err := filepath.EvalSymlinks(abs); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil {
			w.Close()
			return fmt.Errorf("config reload: watching %s: %w", d, err)
		}
	}
	go s.watchLoop(ctx, w, abs, load)
	return nil
}

func (s *Server) watchLoop(ctx context.Context, w *fsnotify.Watcher, abs string, load func() (*grants.Policy, error)) {
	defer w.Close()
	names := []string{filepath.Base(abs)}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		names = append(names, filepath.Base(real))
	}
	var timer *time.Timer
	fire := make(chan struct{}, 1)
	var last []byte // the config text in force, to skip no-op events
	if b, err := os.ReadFile(abs); err == nil {
		last = b
	}
	lastMode := fileMode(abs)
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if !slices.Contains(names, filepath.Base(ev.Name)) && !isK8sSwap(ev.Name) {
				continue
			}
			if timer == nil {
				timer = time.AfterFunc(reloadDebounce, func() {
					select {
					case fire <- struct{}{}:
					default:
					}
				})
			} else {
				timer.Reset(reloadDebounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			s.log.Printf("config watcher: %v", err)
		case <-fire:
			b, err := os.ReadFile(abs)
			mode := fileMode(abs)
			if err == nil && bytes.Equal(b, last) && mode == lastMode {
				continue
			}
			s.reload(load)
			if err == nil {
				last, lastMode = b, mode
			}
		}
	}
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
	if err != nil {
		s.log.Printf("config change refused, the policy in force stays: %v", err)
		return
	}
	old := s.Policy()
	if old != nil && old.AuditPath != p.AuditPath {
		s.log.Printf("config: audit.path changed to %s; the audit log stays at %s until a restart", p.AuditPath, old.AuditPath)
	}
	changed := s.SetPolicy(p)
	what := "tool list unchanged"
	if changed {
		what = "tool list changed, clients notified"
	}
	s.log.Printf("config reloaded: profile %s, mode %s, workspace %s (%s)", p.Profile, p.Mode, p.Workspace, what)
}
