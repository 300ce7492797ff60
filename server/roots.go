package server

import (
	"context"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/grants"
)

// rootsTimeout bounds how long a call waits for a client to list its roots.
const rootsTimeout = 5 * time.Second

// clientRoots remembers, per legacy MCP session, the roots its client
// offered (real paths), fetched on the session's first call and again after
// notifications/roots/list_changed.
type clientRoots struct {
	mu      sync.Mutex
	session map[string][]string // nil entry: not fetched yet
}

// narrowToRoots returns the policy for this call: the workspace narrowed to
// the first root the client offers inside it. A client that declared no
// roots, a modern stateless request, a root outside the workspace or a
// client that does not answer leave the workspace as configured — roots
// only ever narrow it.
func (s *Server) narrowToRoots(ctx context.Context, p *grants.Policy) *grants.Policy {
	sess, ok := mcpserver.ClientSessionFromContext(ctx).(mcpserver.SessionWithClientInfo)
	if !ok || sess.GetClientCapabilities().Roots == nil {
		return p
	}
	id := sess.SessionID()
	s.roots.mu.Lock()
	roots, fetched := s.roots.session[id]
	s.roots.mu.Unlock()
	if !fetched {
		roots = s.fetchRoots(ctx)
		s.roots.mu.Lock()
		if s.roots.session == nil {
			s.roots.session = map[string][]string{}
		}
		s.roots.session[id] = roots
		s.roots.mu.Unlock()
	}
	for _, r := range roots {
		if n := p.WithWorkspace(r); n != p {
			return n
		}
	}
	return p
}

// fetchRoots asks the client for its roots and returns their real paths.
func (s *Server) fetchRoots(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	res, err := s.mcp.RequestRoots(ctx, mcp.ListRootsRequest{})
	if err != nil {
		s.log.Printf("roots: the client declared roots but did not list them (%v); the configured workspace stays", err)
		return []string{}
	}
	out := []string{}
	for _, r := range res.Roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || !filepath.IsAbs(u.Path) {
			continue
		}
		if real, err := filepath.EvalSymlinks(u.Path); err == nil {
			out = append(out, real)
		}
	}
	return out
}

// forgetRoots drops a session's roots (they changed, or the session ended).
func (s *Server) forgetRoots(sess mcpserver.ClientSession) {
	if sess != nil {
		s.roots.mu.Lock()
		delete(s.roots.session, sess.SessionID())
		s.roots.mu.Unlock()
	}
}
