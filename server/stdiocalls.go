package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// maxStdioCalls bounds the tool calls one stdio client may have in flight.
// Past it a call is refused at once with a JSON-RPC error rather than
// queued, so the reader never blocks (it must keep reading the client's
// answers to elicitation).
const maxStdioCalls = 1024

// rpcBusy is the JSON-RPC error code of a call refused because too many
// are in flight.
const rpcBusy = -32001

// stdioCalls runs stdio tool calls each on its own goroutine, in the stdio
// session's context. mcp-go's stdio server runs them on a fixed pool of
// workers (at most 100): calls waiting for a person would hold every worker
// and a read_file from the same client would wait behind them. A waiting
// call here holds only its own goroutine. A goroutine whose call is done
// waits a while for the next one (idle workers): a fresh goroutine grows
// its stack through the call path on every call, ~8% of a small call's
// CPU.
type stdioCalls struct {
	s    *Server
	link *stdioLink

	ready   chan struct{}   // closed once session is set
	session context.Context // the stdio session's context (from mcp-go)
	once    sync.Once

	mu      sync.Mutex
	cancels map[string]context.CancelFunc // request id → its call's cancel
	wg      sync.WaitGroup

	// idle hands a call to a goroutine waiting for one; done ends the
	// waiting ones (wait).
	idle chan func()
	done chan struct{}
}

// workerIdle is how long a goroutine waits for another call.
const workerIdle = 10 * time.Second

func newStdioCalls(s *Server, link *stdioLink) *stdioCalls {
	return &stdioCalls{s: s, link: link, ready: make(chan struct{}), cancels: map[string]context.CancelFunc{},
		idle: make(chan func()), done: make(chan struct{})}
}

// run runs job on an idle goroutine, or a new one.
func (c *stdioCalls) run(job func()) {
	select {
	case c.idle <- job:
	default:
		go c.worker(job)
	}
}

// worker runs job, then the calls handed to it, until none comes for
// workerIdle or the session ends.
func (c *stdioCalls) worker(job func()) {
	timer := time.NewTimer(workerIdle)
	defer timer.Stop()
	for {
		job()
		timer.Reset(workerIdle)
		select {
		case job = <-c.idle:
		case <-timer.C:
			return
		case <-c.done:
			return
		}
	}
}

// bind records the session context mcp-go made (WithStdioContextFunc).
func (c *stdioCalls) bind(ctx context.Context) context.Context {
	c.once.Do(func() { c.session = ctx; close(c.ready) })
	return ctx
}

// clientSession is mcp-go's stdio session, once it exists.
func (c *stdioCalls) clientSession() mcpserver.ClientSession {
	select {
	case <-c.ready:
		return mcpserver.ClientSessionFromContext(c.session)
	default:
		return nil
	}
}

// start runs one admitted tools/call request. It reports false when the
// server stops before the session exists.
func (c *stdioCalls) start(stop <-chan struct{}, id json.RawMessage, line []byte) bool {
	select {
	case <-c.ready:
	case <-stop:
		return false
	}
	key := idKey(id)
	c.mu.Lock()
	// An id still in flight was refused by the reader (stdioLink.begin).
	if len(c.cancels) >= maxStdioCalls {
		c.mu.Unlock()
		c.link.write(rpcError(id, rpcBusy, fmt.Sprintf("refused: %d tool calls are in flight already", maxStdioCalls)))
		c.link.drop(key)
		return true
	}
	ctx, cancel := context.WithCancel(c.s.withCallMeta(c.session, id, "pipe", nil))
	c.cancels[key] = cancel
	c.wg.Add(1)
	c.mu.Unlock()
	msg := append([]byte(nil), line...)
	c.run(func() {
		defer c.wg.Done()
		defer c.forget(key)
		resp := c.s.mcp.HandleMessage(ctx, msg)
		if resp == nil {
			c.link.drop(key) // nothing to answer: no longer in flight
			return
		}
		// Encode writes the message and its newline in one Write, from
		// encoding/json's pooled buffer: no copy of a large result, and a
		// tool result in one pass (encodable). A write that fails (the
		// client is gone) is not news.
		w := &writeOnce{w: c.link}
		if err := json.NewEncoder(w).Encode(encodable(resp)); err != nil && !w.wrote {
			c.s.log.Printf("stdio: encoding a response: %v", err)
		}
	})
	return true
}

// cancel cancels the call with this request id (notifications/cancelled).
func (c *stdioCalls) cancel(id json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cancel, ok := c.cancels[idKey(id)]; ok {
		cancel()
	}
}

func (c *stdioCalls) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cancel, ok := c.cancels[key]; ok {
		cancel()
		delete(c.cancels, key)
	}
}

// wait waits for every call to return (their contexts end with the
// session's), and ends the idle goroutines.
func (c *stdioCalls) wait() {
	c.wg.Wait()
	close(c.done)
}

// writeOnce passes writes on, noting that one was tried.
type writeOnce struct {
	w     io.Writer
	wrote bool
}

func (o *writeOnce) Write(b []byte) (int, error) {
	o.wrote = true
	return o.w.Write(b)
}
