package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/server/telemetry"
)

// telemetryKeyFile holds the HMAC key of argument hashes, in the state
// folder ("*.key": read_file treats it as credential data too).
const telemetryKeyFile = "telemetry.key"

// openTelemetry builds the tracer the policy and the environment ask for:
// nil (off) unless a collector is named. Nothing is dialled until a span
// is exported. stateDir is the state folder when the hash key was put
// there (a reload may then not open a root over it), else "".
func openTelemetry(p *grants.Policy, logger *log.Logger) (tel *telemetry.Tracer, stateDir string, err error) {
	set, err := telemetry.Resolve(p.Telemetry.OTLPEndpoint, os.Getenv)
	if err != nil || set.Endpoint == "" {
		return nil, "", err
	}
	var key []byte
	hashes := "arguments and results are not exported"
	if p.Telemetry.HashArguments {
		if stateDir, err = StateDir(p); err != nil {
			return nil, "", fmt.Errorf("telemetry: hash_arguments needs the state folder: %w", err)
		}
		if key, err = loadTelemetryKey(stateDir); err != nil {
			return nil, "", err
		}
		hashes = "arguments as keyed SHA-256 only (hash_arguments)"
	}
	logger.Printf("telemetry: traces go to %s (from %s) as OTLP/HTTP JSON; %s", set.Endpoint, set.Source, hashes)
	exp := telemetry.NewExporter(set, nil, logger.Printf)
	return telemetry.New(telemetry.Options{Exporter: exp, HashKey: key, Version: Version}), stateDir, nil
}

// shutdownTelemetry exports what is queued, for at most a few seconds.
func (s *Server) shutdownTelemetry() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.tel.Shutdown(ctx); err != nil {
		s.log.Printf("telemetry: shutdown: %v", err)
	}
}

// loadTelemetryKey reads the key from dir, making it at first use (0600).
// A key file that is not a regular file owned by this user, or that others
// may read or write, is refused, as for the audit key.
func loadTelemetryKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, telemetryKeyFile)
	key, err := readTelemetryKey(path)
	if !errors.Is(err, os.ErrNotExist) {
		return key, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, os.ErrExist) {
		return readTelemetryKey(path) // another server made it at the same moment
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry key: %w", err)
	}
	key = make([]byte, 32)
	rand.Read(key)
	_, err = f.WriteString(hex.EncodeToString(key) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("telemetry key: %w", err)
	}
	return key, nil
}

func readTelemetryKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("telemetry key: %w", err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular() || st == nil || int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("telemetry key %s is not a regular file owned by this user; remove it to make a new key", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("telemetry key %s is readable or writable by others (mode %04o); fix with: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 256))
	if err != nil {
		return nil, fmt.Errorf("telemetry key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("telemetry key %s is not 32 hex-encoded bytes; remove it to make a new key", path)
	}
	return key, nil
}

// startCallSpan starts the span of a tool call (nil when traces are off).
func (s *Server) startCallSpan(ctx context.Context, t toolkit.Tool, req mcp.CallToolRequest) (context.Context, *telemetry.Call) {
	if s.tel == nil {
		return ctx, nil
	}
	cm, _ := ctx.Value(callMetaKey{}).(callMeta)
	var meta map[string]any
	if req.Params.Meta != nil {
		meta = req.Params.Meta.AdditionalFields
	}
	raw, _ := rawArguments(req) // hashed only; nil when it cannot be encoded
	return s.tel.StartCall(ctx, telemetry.CallInfo{Tool: t.Name(), RequestID: cm.id, Transport: cm.transport,
		ProtocolVersion: mcpserver.RequestProtocolVersion(ctx), Meta: meta, Header: cm.header, Args: raw})
}

// callMeta is what a transport knows of a tools/call request that mcp-go
// does not hand the tool handler: its JSON-RPC id, the transport and, over
// HTTP, the request's header (its traceparent is the parent when _meta
// carries none).
type callMeta struct {
	id        json.RawMessage
	transport string      // network.transport: "pipe" or "tcp"
	header    http.Header // nil on stdio
}

type callMetaKey struct{}

// withCallMeta records a request's id (and HTTP header) for its span; only
// when telemetry is on (off, the context is not touched).
func (s *Server) withCallMeta(ctx context.Context, id json.RawMessage, transport string, header http.Header) context.Context {
	if s.tel == nil {
		return ctx
	}
	return context.WithValue(ctx, callMetaKey{}, callMeta{id: id, transport: transport, header: header})
}
