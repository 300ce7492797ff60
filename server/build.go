package server

import (
	"log"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// DefaultTools are the built-in tools, in listing order.
func DefaultTools() []toolkit.Tool {
	return []toolkit.Tool{
		fstools.ReadFile{},
	}
}

// Open builds the server the command line serves: the built-in tools, the
// audit log named by the policy, and the approval channels available.
func Open(p *grants.Policy, logger *log.Logger) (*Server, error) {
	audit, err := OpenAudit(p.AuditPath)
	if err != nil {
		return nil, err
	}
	s, err := New(p, Options{Tools: DefaultTools(), Audit: audit, Log: logger})
	if err != nil {
		audit.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the server's resources.
func (s *Server) Close() error { return s.audit.Close() }
