package server

import (
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/onellm/onellm-mcp/approval"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/statedir"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/shelltool"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
	"github.com/onellm/onellm-mcp/webtools"
)

// DefaultTools are the built-in tools, in listing order.
func DefaultTools() []toolkit.Tool {
	return []toolkit.Tool{
		fstools.ReadFile{},
		fstools.NewApplyPatch(),
		&shelltool.Tool{},
		webtools.NewTool(),
		approval.AskUser{},
	}
}

// Open builds the server the command line serves: the built-in tools, the
// audit log named by the policy, and the approval channels available.
func Open(p *grants.Policy, logger *log.Logger) (*Server, error) {
	fstools.RecoverAtStart(p, logger.Printf) // before any call can touch the files
	// The key and the log are opened after the first answer (Start).
	audit, err := OpenAuditLater(p, logger)
	if err != nil {
		return nil, err
	}
	var console *approval.Console
	stateDir := audit.stateDir // "" unless proven out of every root
	if p.Console != "" {
		dir, err := StateDir(p)
		if err != nil {
			audit.Close()
			return nil, fmt.Errorf("approval console: %w", err)
		}
		stateDir = dir
		console, err = openConsole(p, dir, logger)
		if err != nil {
			audit.Close()
			return nil, err
		}
	}
	// Desktop notifications when the person's session bus exists; none
	// (and no error) otherwise. The bus is connected at the first ask, not
	// here: the first answer does not wait for the bus daemon.
	notifier := approval.NewNotifier(os.Getenv("DBUS_SESSION_BUS_ADDRESS"), logger.Printf)
	if console != nil {
		notifier.OpenWith(console.AskLoginURL) // the notification's action logs the person in, on the ask's page
	}
	broker, err := approval.New(approval.Options{Console: console, Logf: logger.Printf, Notifier: notifier})
	if err != nil {
		audit.Close()
		return nil, err
	}
	tel, telDir, err := openTelemetry(p, logger)
	if err != nil {
		audit.Close()
		return nil, err
	}
	s, err := New(p, Options{Tools: DefaultTools(), Approver: broker, Asker: broker, Audit: audit, Log: logger, Telemetry: tel})
	if err != nil {
		audit.Close()
		return nil, err
	}
	if stateDir == "" {
		stateDir = telDir // the telemetry key is kept there
	}
	s.console, s.stateDir = console, stateDir
	s.stopHangup = reopenOnHangup(audit)
	return s, nil
}

// openConsole opens the approval console at addr, shared with the user's
// other servers that name the same address (approval.OpenInbox): the
// rendezvous socket goes in the user's runtime folder, and each time the
// console settles (this server serves it, or joined another's) its token
// is written to the state folder and its address said on stderr.
func openConsole(p *grants.Policy, stateDir string, logger *log.Logger) (*approval.Console, error) {
	tokenFile := filepath.Join(stateDir, "console.token")
	runDir, err := statedir.Runtime(stateDir, ReadableRoots(p))
	if err != nil {
		return nil, fmt.Errorf("approval console: %w", err)
	}
	ready := func(role, url, token string) {
		if err := writeToken(tokenFile, token); err != nil {
			logger.Printf("approval console: %v", err)
		}
		what := "approval console"
		if role == "joined" {
			what = "approval console (shared with another onellm-mcp server)"
		}
		logger.Printf("%s: %s?token=%s (token also in %s)", what, url, token, tokenFile)
	}
	c, err := approval.OpenInbox(approval.InboxOptions{Addr: p.Console, RuntimeDir: runDir, Name: parentName(), Log: logger,
		Ready: ready, Holder: (&portHolders{}).name})
	if err != nil {
		return nil, fmt.Errorf("approval console: %w", err)
	}
	return c, nil
}

// reopenOnHangup reopens the audit log on SIGHUP, as logrotate's postrotate
// expects; the returned function stops it.
func reopenOnHangup(a *Audit) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				a.Reopen() // a failure is said on stderr by the log itself
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

// Close releases the server's resources; the audit log gets its last
// checkpoint.
func (s *Server) Close() error {
	if s.stopHangup != nil {
		s.stopHangup()
	}
	if s.console != nil {
		s.console.Close()
	}
	if s.tel != nil {
		s.shutdownTelemetry()
	}
	return s.audit.Close()
}

// StateDir opens the user's state folder (internal/statedir) and proves it
// out of reach of every root a tool reads: the policy's roots and the
// sandbox's system folders. Whatever the server keeps for itself goes
// there; when this fails the server must not start.
func StateDir(p *grants.Policy) (string, error) {
	return statedir.Open(p.Home, ReadableRoots(p))
}

// ReadableRoots lists every root some tool can read without asking.
func ReadableRoots(p *grants.Policy) []string {
	return slices.Concat(p.ToolRoots(), sandbox.SystemRoots())
}

// writeToken writes the console's token to a new 0600 file beside path and
// renames it over path, so a reader never sees a partial or an older token.
func writeToken(path, token string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("approval console token: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".console.token-")
	if err != nil {
		return fmt.Errorf("approval console token: %w", err)
	}
	defer os.Remove(f.Name()) // after the rename: nothing to remove
	_, err = f.WriteString(token + "\n")
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("approval console token: %w", err)
	}
	return nil
}
