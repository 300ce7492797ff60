package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/internal/strictjson"
)

// The stdio transport puts a reader of its own between the client and
// mcp-go's stdio server, because mcp-go reads a line whole whatever its
// size, answers requests the client cancelled, and cancels every call at
// once when the server is told to stop. The reader:
//
//   - reads at most limits.stdio_max_message_bytes of a line; a longer one is
//     answered with a JSON-RPC error and skipped without being kept;
//   - passes each message through the ingress (admit), and mcp-go sees only
//     the canonical form the ingress made of it;
//   - tracks the requests in flight, so that a request the client cancelled
//     (notifications/cancelled) gets no response, as the MCP spec says, and
//     so that a shutdown can wait for them;
//   - on SIGTERM/SIGINT (ctx ending) refuses new requests and gives the calls
//     in flight the grace period before cancelling them; a call that still
//     gets no result is answered with a JSON-RPC error.
//
// A stdin that is a pipe is read through a non-blocking description of the
// same pipe (pollableReader), so the wait for the next message parks a
// goroutine rather than an OS thread.

// StdioOptions configure the stdio transport.
type StdioOptions struct {
	// MaxMessage caps one message (default limits.stdio_max_message_bytes).
	MaxMessage int64
	// Grace is how long calls in flight may run after ctx ends (default 10 s).
	Grace time.Duration
}

const defaultGrace = 10 * time.Second

// rpcShuttingDown is the JSON-RPC error code of a request refused or
// cancelled because the server is shutting down.
const rpcShuttingDown = -32000

// ServeStdio serves one client over in/out until in closes, or ctx ends and
// the calls in flight have finished or had their grace period.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return s.ServeStdioWith(ctx, in, out, StdioOptions{})
}

// ServeStdioWith is ServeStdio with options.
func (s *Server) ServeStdioWith(ctx context.Context, in io.Reader, out io.Writer, opts StdioOptions) error {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = s.Policy().Limits.StdioMaxMessageBytes
	}
	if opts.Grace <= 0 {
		opts.Grace = defaultGrace
	}
	if f, ok := in.(*os.File); ok {
		p, closeIn, err := pollableReader(f)
		if err != nil {
			return err
		}
		defer closeIn()
		in = p
	}
	link := &stdioLink{out: out, inflight: map[string]bool{}, idle: make(chan struct{}, 1)}
	link.first = func() { s.startWhen(link.whenQuiet) }
	calls := newStdioCalls(s, link)
	std := mcpserver.NewStdioServer(s.mcp)
	// Tool calls do not reach mcp-go's worker pool (stdioCalls runs them);
	// the context func hands over the stdio session's context.
	mcpserver.WithStdioContextFunc(calls.bind)(std)
	std.SetErrorLogger(s.log)

	listenCtx, stopListening := context.WithCancel(context.WithoutCancel(ctx))
	defer stopListening()
	pr, pw := io.Pipe()
	reader := &stdioReader{s: s, link: link, max: opts.MaxMessage, ctx: ctx, calls: calls, stop: listenCtx.Done()}
	go func() { pw.CloseWithError(reader.run(in, pw)) }()
	go func() {
		select {
		case <-ctx.Done():
		case <-listenCtx.Done():
			return
		}
		s.log.Printf("shutting down: no new requests; calls in flight have %s to finish", opts.Grace)
		if !link.waitIdle(opts.Grace) {
			s.log.Printf("grace period over: cancelling the calls still running")
		}
		stopListening()
	}()
	err := std.Listen(listenCtx, pr, link)
	pr.Close()
	calls.wait() // the session's context has ended: each call returns and answers
	link.answerUnanswered("the server shut down before the call finished; it was cancelled")
	if err == context.Canceled || err == io.EOF {
		return nil
	}
	return err
}

// stdioReader reads client messages, bounded, through the ingress into
// mcp-go.
type stdioReader struct {
	s    *Server
	link *stdioLink
	max  int64
	ctx  context.Context // ends when the server is told to stop
	// calls runs tool calls; stop ends when mcp-go stops listening.
	calls *stdioCalls
	stop  <-chan struct{}
}

func (r *stdioReader) run(in io.Reader, to io.Writer) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var buf []byte
	for {
		line, over, err := readLine(br, r.max, &buf)
		if over != nil {
			p := peekMessage(over)
			r.s.log.Printf("refused a stdio message over %d bytes (limits.stdio_max_message_bytes)", r.max)
			// Answered when it is a request, or when the prefix does not say
			// what it is; a notification or a response to the server gets
			// no answer, as JSON-RPC says.
			request, unknown := p.method != "" && p.hasID, p.method == "" && !p.hasID
			if request || unknown {
				r.link.write(rpcError(p.id, rpcInvalidRequest, fmt.Sprintf(
					"refused: the message is larger than %d bytes (limits.stdio_max_message_bytes); it was skipped", r.max)))
			}
		} else if len(line) > 0 {
			if werr := r.message(line, to); werr != nil {
				return werr
			}
		}
		if cap(buf) > 1<<20 {
			buf = nil // a long message's buffer is not kept for the next
		}
		if err != nil {
			return err
		}
	}
}

// message admits one message and hands its canonical form to mcp-go.
func (r *stdioReader) message(line []byte, to io.Writer) error {
	adm := r.s.admit("stdio", line)
	if adm.msg == nil {
		if adm.reply != nil {
			r.link.write(adm.reply)
		}
		return nil
	}
	msg, p := adm.msg, adm.peek
	if p.method != "" && p.hasID && r.ctx.Err() != nil {
		r.link.write(rpcError(p.id, rpcShuttingDown, "refused: the server is shutting down"))
		return nil
	}
	if p.method != "" && p.hasID && !r.link.begin(p.id) {
		// Any request reusing the id of one still in flight is refused:
		// its answer would be taken for the first one's, and the first
		// one's tracking (a cancel, the shutdown's wait) would be lost.
		r.link.write(rpcError(p.id, rpcInvalidRequest, "refused: a request with this id is still in flight"))
		return nil
	}
	switch {
	case p.method == "tools/call" && p.hasID:
		if r.calls.start(r.stop, p.id, msg) {
			return nil
		}
	case p.method == string(mcp.MethodNotificationRootsListChanged):
		// Applied here, before the next line is read: mcp-go handles the
		// notification on its own loop while tool calls run on ours, so a
		// call the client sends right after it could otherwise still see
		// the old roots.
		if sess := r.calls.clientSession(); sess != nil {
			r.s.forgetRoots(sess)
		}
	case p.method == "notifications/cancelled":
		var n struct {
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal(msg, &n) == nil {
			r.link.cancel(n.Params.RequestID)
			r.calls.cancel(n.Params.RequestID)
		}
	}
	_, err := to.Write(append(msg, '\n'))
	return err
}

// readLine reads the next line into *buf, without its newline. A line over
// max bytes is consumed and dropped: over holds its first few KiB (to find
// its id) and line is nil.
func readLine(br *bufio.Reader, max int64, buf *[]byte) (line, over []byte, err error) {
	*buf = (*buf)[:0]
	for {
		frag, err := br.ReadSlice('\n')
		if over == nil {
			if !fitsWithNewline(*buf, frag, max) {
				over = append([]byte(nil), (*buf)[:min(len(*buf), 4<<10)]...)
				if len(over) < 4<<10 {
					over = append(over, frag[:min(len(frag), 4<<10-len(over))]...)
				}
				*buf = (*buf)[:0]
			} else {
				if need := len(*buf) + len(frag); need > cap(*buf) && need > 1<<20 {
					// A long line: grow once to the cap rather than by steps,
					// each of which would leave garbage as large.
					grown := make([]byte, len(*buf), max+int64(br.Size())+2)
					copy(grown, *buf)
					*buf = grown
				}
				*buf = append(*buf, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if over != nil {
			return nil, over, err
		}
		return trimNewline(*buf), nil, err
	}
}

// fitsWithNewline reports whether buf+frag is at most max bytes once its
// line ending is removed.
func fitsWithNewline(buf, frag []byte, max int64) bool {
	n := int64(len(buf) + len(frag))
	if len(frag) > 0 && frag[len(frag)-1] == '\n' {
		n--
		if (len(frag) > 1 && frag[len(frag)-2] == '\r') || (len(frag) == 1 && len(buf) > 0 && buf[len(buf)-1] == '\r') {
			n--
		}
	}
	return n <= max
}

func trimNewline(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

// stdioLink is the writer every stdio message leaves by: mcp-go's responses,
// its requests to the client and the ingress's own answers, one message per
// Write. It tracks the client's requests in flight.
type stdioLink struct {
	mu       sync.Mutex
	out      io.Writer
	inflight map[string]bool // request id → cancelled by the client
	ids      map[string]json.RawMessage
	idle     chan struct{}   // signalled when inflight empties
	quiet    []chan struct{} // closed when inflight next empties (whenQuiet)
	// first runs once the first message is out (the tools start then, so
	// the initialize response waits for none of it); nil after.
	first func()
}

// Write implements io.Writer for mcp-go: b is one message and its newline.
func (l *stdioLink) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.inflight) > 0 {
		if id, ok := responseID(b); ok {
			key := idKey(id)
			if cancelled, tracked := l.inflight[key]; tracked {
				l.finish(key)
				if cancelled {
					return len(b), nil // the client cancelled it: no response
				}
			}
		}
	}
	defer l.sent()
	return l.out.Write(b)
}

// write sends one message the ingress made.
func (l *stdioLink) write(msg []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out.Write(append(msg, '\n'))
	l.sent()
}

// sent runs first after the first message; l.mu is held.
func (l *stdioLink) sent() {
	if l.first != nil {
		l.first()
		l.first = nil
	}
}

// begin tracks a request until its answer is written; it reports false,
// tracking nothing, when a request with that id is in flight already.
func (l *stdioLink) begin(id json.RawMessage) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := idKey(id)
	if _, dup := l.inflight[key]; dup {
		return false
	}
	l.inflight[key] = false
	if l.ids == nil {
		l.ids = map[string]json.RawMessage{}
	}
	l.ids[key] = append(json.RawMessage(nil), id...)
	return true
}

func (l *stdioLink) cancel(id json.RawMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if key := idKey(id); key != "" {
		if _, ok := l.inflight[key]; ok {
			l.inflight[key] = true
		}
	}
}

// drop forgets a request that was answered by write.
func (l *stdioLink) drop(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finish(key)
}

// finish forgets a request; l.mu is held.
func (l *stdioLink) finish(key string) {
	delete(l.inflight, key)
	delete(l.ids, key)
	if len(l.inflight) == 0 {
		select {
		case l.idle <- struct{}{}:
		default:
		}
		for _, q := range l.quiet {
			close(q)
		}
		l.quiet = nil
	}
}

// whenQuiet returns a channel closed once no client request is in flight:
// at once when none is.
func (l *stdioLink) whenQuiet() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := make(chan struct{})
	if len(l.inflight) == 0 {
		close(q)
	} else {
		l.quiet = append(l.quiet, q)
	}
	return q
}

// waitIdle waits until no request is in flight, at most d.
func (l *stdioLink) waitIdle(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		l.mu.Lock()
		n := len(l.inflight)
		l.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-l.idle:
		case <-timer.C:
			return false
		}
	}
}

// answerUnanswered sends an error for every request still in flight that the
// client did not cancel.
func (l *stdioLink) answerUnanswered(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, cancelled := range l.inflight {
		if !cancelled {
			l.out.Write(append(rpcError(l.ids[key], rpcShuttingDown, msg), '\n'))
		}
		l.finish(key)
	}
}

// responseID returns the id of a message when it is a response (an id and
// a result or an error, no method), reading only as far as it must.
func responseID(msg []byte) (json.RawMessage, bool) {
	var id json.RawMessage
	response := false
	_ = strictjson.Members(msg, func(key []byte, value func() ([]byte, error)) bool {
		switch string(key) {
		case "id":
			raw, err := value()
			if err != nil {
				return false
			}
			id = raw
		case "method":
			response = false
			return false
		case "result", "error":
			response = true
		}
		return id == nil || !response
	})
	return id, response && id != nil
}

// idKey is a request id in a canonical form: the number or the string it
// decodes to, so the client's 1 and mcp-go's echo 1.0 are one id.
func idKey(raw json.RawMessage) string {
	if k, ok := idKeyFast(raw); ok {
		return k
	}
	return idKeyDecoded(raw)
}

func idKeyDecoded(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch v := v.(type) {
	case string:
		return "s:" + v
	case float64:
		return "n:" + strconv.FormatFloat(v, 'g', -1, 64)
	}
	return ""
}

// idKeyFast is idKey of the ids clients send (a small non-negative
// integer, a string without escapes) without decoding them; ok is false
// for any other, which idKey decodes. FuzzIDKey checks it against the
// decode.
func idKeyFast(raw []byte) (string, bool) {
	switch {
	case len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"':
		in := raw[1 : len(raw)-1]
		for _, c := range in {
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				return "", false // escapes and UTF-8 (replaced when invalid) are decoded
			}
		}
		return "s:" + string(in), true
	case len(raw) >= 1 && len(raw) <= 6 && (raw[0] != '0' || len(raw) == 1):
		// Up to six digits read as an integer and format back the same
		// ('g' with the shortest precision switches to an exponent at 1e6).
		for _, c := range raw {
			if c < '0' || c > '9' {
				return "", false
			}
		}
		return "n:" + string(raw), true
	}
	return "", false
}
