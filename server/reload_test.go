package server

import (
	"bytes"
	"context"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/webtools"
)

// lineLog is a log destination that hands each line to whoever waits.
type lineLog struct {
	mu    sync.Mutex
	lines []string
	cond  *sync.Cond
}

func newLineLog() *lineLog {
	l := &lineLog{}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *lineLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, strings.TrimSpace(string(b)))
	l.mu.Unlock()
	l.cond.Broadcast()
	return len(b), nil
}

// wait returns the first line after the first `from` lines that contains
// one of the texts, or fails after d.
func (l *lineLog) wait(t *testing.T, from int, d time.Duration, texts ...string) string {
	t.Helper()
	timer := time.AfterFunc(d, l.cond.Broadcast)
	defer timer.Stop()
	deadline := time.Now().Add(d)
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		for _, line := range l.lines[min(from, len(l.lines)):] {
			for _, s := range texts {
				if strings.Contains(line, s) {
					return line
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q within %s; log: %q", texts, d, l.lines)
		}
		l.cond.Wait()
	}
}

func (l *lineLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// TestWatchConfig: a change on disk is picked up (a rename over the file,
// as editors do), a bad one is refused and the policy in force stays, and a
// change of audit.path waits for a restart.
// watchFixture is a server under the config written first, not yet
// watching it: write replaces the config atomically, load compiles it as
// serve does.
type watchFixture struct {
	root, cfgPath, auditLine string
	write                    func(src string)
	load                     func() (*grants.Policy, error)
	s                        *Server
	logs                     *lineLog
}

func newWatchFixture(t *testing.T, first string) *watchFixture {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	f := &watchFixture{root: root, cfgPath: filepath.Join(root, "onellm.toml"), auditLine: "\n[audit]\npath = \"" + filepath.Join(root, "audit.jsonl") + "\"\n"}
	f.write = func(src string) {
		t.Helper()
		tmp := f.cfgPath + ".tmp"
		if err := os.WriteFile(tmp, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, f.cfgPath); err != nil {
			t.Fatal(err)
		}
	}
	f.load = func() (*grants.Policy, error) {
		b, err := os.ReadFile(f.cfgPath)
		if err != nil {
			return nil, err
		}
		cfg, err := grants.Parse(b, f.cfgPath, root)
		if err != nil {
			return nil, err
		}
		return grants.Compile(cfg, grants.CompileOptions{Home: root})
	}
	f.write(first + f.auditLine)
	p, err := f.load()
	if err != nil {
		t.Fatal(err)
	}
	audit, err := OpenAudit(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audit.Close() })
	f.logs = newLineLog()
	if f.s, err = New(p, Options{Tools: []toolkit.Tool{webtools.NewTool()}, Audit: audit, Log: log.New(f.logs, "", 0)}); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestWatchConfigChangedBeforeWatch: a config changed between the load
// and the start of the watch (serve starts it after the first answer) is
// applied: the watch compares the file with the text loaded, not with what
// the file holds when it starts.
func TestWatchConfigChangedBeforeWatch(t *testing.T) {
	first := "workspace = \"ws\"\nprofile = \"interactive-dev\"\n"
	f := newWatchFixture(t, first)
	f.write("workspace = \"ws\"\nprofile = \"strict-production\"\n" + f.auditLine)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := f.logs.count()
	if err := f.s.WatchConfig(ctx, f.cfgPath, []byte(first+f.auditLine), f.load); err != nil {
		t.Fatal(err)
	}
	if line := f.logs.wait(t, n, 10*time.Second, "config reloaded", "refused"); !strings.Contains(line, "profile strict-production") {
		t.Fatalf("reload: %s", line)
	}
	if f.s.Policy().Profile != "strict-production" {
		t.Fatalf("policy %s", f.s.Policy().Profile)
	}
}

func TestWatchConfig(t *testing.T) {
	f := newWatchFixture(t, "workspace = \"ws\"\nprofile = \"interactive-dev\"\n")
	root, cfgPath, auditLine, write, load, s, logs := f.root, f.cfgPath, f.auditLine, f.write, f.load, f.s, f.logs
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inForce, _ := os.ReadFile(cfgPath)
	if err := s.WatchConfig(ctx, cfgPath, inForce, load); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(s.ToolNames(), "http_request") {
		t.Fatalf("tools %v", s.ToolNames())
	}

	n := logs.count()
	write("workspace = \"ws\"\nprofile = \"strict-production\"\n" + auditLine)
	if line := logs.wait(t, n, 10*time.Second, "config reloaded", "refused"); !strings.Contains(line, "profile strict-production") || !strings.Contains(line, "clients notified") {
		t.Fatalf("reload: %s", line)
	}
	if s.Policy().Profile != "strict-production" || slices.Contains(s.ToolNames(), "http_request") {
		t.Fatalf("policy %s, tools %v", s.Policy().Profile, s.ToolNames())
	}

	n = logs.count()
	write("workspace = \"ws\"\nprofile = \"no-such-profile\"\n" + auditLine)
	if line := logs.wait(t, n, 10*time.Second, "config reloaded", "refused"); !strings.Contains(line, "refused") {
		t.Fatalf("bad config: %s", line)
	}
	if s.Policy().Profile != "strict-production" {
		t.Fatalf("a bad change replaced the policy: %s", s.Policy().Profile)
	}

	n = logs.count()
	write("workspace = \"ws\"\nprofile = \"interactive-dev\"\n[audit]\npath = \"" + filepath.Join(root, "other.jsonl") + "\"\n")
	if line := logs.wait(t, n, 10*time.Second, "config reloaded", "refused"); !strings.Contains(line, "audit.path changed") {
		t.Fatalf("audit path change: %s", line)
	}

	// The same text written again changes nothing (no reload is logged
	// before the next real change is).
	n = logs.count()
	b, _ := os.ReadFile(cfgPath)
	write(string(b))
	write("workspace = \"ws\"\nprofile = \"permissive-dev\"\n" + auditLine)
	if line := logs.wait(t, n, 10*time.Second, "config reloaded", "refused"); !strings.Contains(line, "permissive-dev") {
		t.Fatalf("after a no-op write: %s", line)
	}
	if isK8sSwap("..data") != true || isK8sSwap("data") {
		t.Error("isK8sSwap")
	}
}

// TestWriteToken: the console token is written private to the user, even
// over a file that existed with a wider mode.
func TestWriteToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "console.token")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeToken(path, "tok"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	b, _ := os.ReadFile(path)
	if err != nil || fi.Mode().Perm() != 0o600 || !bytes.Equal(b, []byte("tok\n")) {
		t.Fatalf("token file %v %q %v", fi.Mode(), b, err)
	}
	if err := writeToken(filepath.Join(path, "under-a-file"), "tok"); err == nil {
		t.Fatal("writing beneath a file succeeded")
	}
}
