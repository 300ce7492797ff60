package server

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/onellm/onellm-mcp/approval"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/shelltool"
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
	audit, err := OpenAudit(p.AuditPath)
	if err != nil {
		return nil, err
	}
	var console *approval.Console
	if p.Console != "" {
		tokenFile, err := consoleTokenFile(p)
		if err != nil {
			audit.Close()
			return nil, err
		}
		console, err = approval.StartConsole(p.Console, tokenFile, logger)
		if err != nil {
			audit.Close()
			return nil, fmt.Errorf("approval console: %w", err)
		}
	}
	consoleURL := ""
	if console != nil {
		consoleURL = console.URL()
	}
	// Desktop notifications when the person's session bus exists; none
	// (and no error) otherwise.
	notifier := approval.NewNotifier(os.Getenv("DBUS_SESSION_BUS_ADDRESS"), consoleURL, logger.Printf)
	broker, err := approval.New(approval.Options{Console: console, Logf: logger.Printf, Notifier: notifier})
	if err != nil {
		audit.Close()
		return nil, err
	}
	s, err := New(p, Options{Tools: DefaultTools(), Approver: broker, Asker: broker, Audit: audit, Log: logger})
	if err != nil {
		audit.Close()
		return nil, err
	}
	s.console = console
	return s, nil
}

// Close releases the server's resources.
func (s *Server) Close() error {
	if s.console != nil {
		s.console.Close()
	}
	return s.audit.Close()
}

// consoleTokenFile is where the console's token is written: beside the audit
// log, or in the user's state folder when the audit log lies where tools can
// read (the workspace, a sandbox root) — the token approves asks, so no tool
// may ever read it.
func consoleTokenFile(p *grants.Policy) (string, error) {
	for _, dir := range []string{filepath.Dir(p.AuditPath), grants.StateDir(p.Home)} {
		if !p.ToolsReach(dir) {
			return filepath.Join(dir, "console.token"), nil
		}
	}
	return "", fmt.Errorf("approval console: both the audit log's folder and %s lie where tools can read; move the audit log", grants.StateDir(p.Home))
}
