package server

import (
	"fmt"
	"log"
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
		fstools.ApplyPatch{},
		&shelltool.Tool{},
		webtools.NewTool(),
		approval.AskUser{},
	}
}

// Open builds the server the command line serves: the built-in tools, the
// audit log named by the policy, and the approval channels available.
func Open(p *grants.Policy, logger *log.Logger) (*Server, error) {
	audit, err := OpenAudit(p.AuditPath)
	if err != nil {
		return nil, err
	}
	var console *approval.Console
	if p.Console != "" {
		// The token file sits next to the audit log, in the user's state folder.
		console, err = approval.StartConsole(p.Console, filepath.Join(filepath.Dir(p.AuditPath), "console.token"), logger)
		if err != nil {
			audit.Close()
			return nil, fmt.Errorf("approval console: %w", err)
		}
	}
	broker, err := approval.New(approval.Options{Console: console})
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
