package approval

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/onellm/onellm-mcp/internal/display"
)

// One inbox for all of a user's servers.
//
// Every server with [approval] console set keeps its asks in its own
// Console. The first to listen on the console's address is the hub: it
// serves the page and listens on a unix socket (the rendezvous) in the
// user's private runtime folder; a server that finds the address taken
// joins the hub over that socket and posts its asks there, labelled with
// its pid (read from the kernel, SO_PEERCRED) and name, and the hub routes
// each answer given on the page back to the server that posted the ask,
// which checks it against its own form and says what became of it. When a
// peer's connection ends its asks leave the page; when the hub's ends, each
// peer tries to take the address over: the one that gets it becomes the
// hub and the others join it and post their pending asks again. A server
// that becomes the hub other than by its first start on a free address (a
// takeover, or the console coming back after it was unavailable) serves
// with a fresh login token, CSRF token and no logins: while the address
// was not ours anyone could listen on it and be sent the person's login
// cookie, or opened a login URL, so nothing handed out before counts. The
// person's open page then logs in again, with the new URL said on stderr
// (and in the console.token file); the peers get the new token when they
// join.
// When the address is held by something that is not a hub of this user,
// that is said on stderr, naming the holder where it can be found; asks
// that wait on the console alone are then denied (approval_unavailable),
// and the server keeps trying to get the address.
//
// Security model: the runtime folder is the user's own (mode 0700, checked
// by the caller); both ends check the other's uid with SO_PEERCRED and
// refuse, and log, any other. A peer can post and withdraw only its own
// asks (each keeps the unguessable id its server gave it, so links to
// /ask/ID work on the shared page; an id already listed is refused, and
// the id is bound to the connection that posted it) and cannot answer:
// only the hub's page
// (behind the console's token, cookie and CSRF checks) answers, and an
// answer goes only to the connection that posted the ask. Messages are
// bounded and strictly parsed (wire.go). What a peer shows is its own
// rendering, escaped again by the hub. Not protected: another process of
// the same user (it could read the token file anyway).

// InboxOptions configure OpenInbox.
type InboxOptions struct {
	// Addr is the console's address ([approval] console).
	Addr string
	// RuntimeDir is the user's private folder for the rendezvous socket.
	RuntimeDir string
	// Name labels this server's asks on the page, after its pid.
	Name string
	// Log gets the console's lines (nil: discarded).
	Log *log.Logger
	// Ready is called each time this server's console settles: role
	// "serving" (this server is the hub) or "joined", with the console's
	// address and the token that logs in there.
	Ready func(role, url, token string)
	// Holder names what listens on a TCP address ("" when unknown), for
	// the error when it is not a hub of this user.
	Holder func(addr string) string

	grace   time.Duration // joinGrace (tests)
	forward time.Duration // forwardTimeout (tests)
	// beforeWait (tests) is called as a forwarded answer starts waiting
	// for the peer's result: late is false in route.forward, true in
	// route.await.
	beforeWait func(late bool, ended <-chan struct{})
}

// Inbox roles.
const (
	roleConnecting = "connecting"
	roleHub        = "serving"
	rolePeer       = "joined"
	roleDown       = "unavailable"
)

// inbox is the Console's side of the shared inbox (nil for a console of
// its own). Lock order: Console.mu before inbox.mu before hub.mu.
type inbox struct {
	c    *Console
	opts InboxOptions
	addr string // the TCP address, localhost written as 127.0.0.1
	sock string // the rendezvous socket
	// sockErr says why the socket cannot be used (its path is too long).
	sockErr error
	uid     int
	stop    chan struct{}
	ended   chan struct{}

	mu     sync.Mutex
	role   string
	closed bool
	link   *wireConn // role peer: the link to the hub
	hub    *hub      // role hub
	// token logs in to the console while the role is hub or peer (a
	// peer's is the hub's, from its welcome).
	token   string
	lastErr string // the last "down" error said, to say each once
}

var (
	errConsoleDown  = errors.New("the approval console is unavailable")
	errDuplicateAsk = errors.New("an ask with this id is already listed")
)

// maxSocketPath is the longest unix socket path (sun_path less its NUL).
const maxSocketPath = 107

// OpenInbox is the console for addr, shared with the user's other servers
// that name the same address. It listens at once when the address is free
// (this server is the hub, and Ready is called before it returns);
// otherwise it joins the hub in the background, so start-up does not wait
// (Ready is called when it has joined). It fails only for a bad address or
// runtime folder, or when the address cannot be listened on for another
// reason than being in use.
func OpenInbox(opts InboxOptions) (*Console, error) {
	if err := CheckConsoleAddr(opts.Addr); err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(opts.Addr)
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	if opts.Log == nil {
		opts.Log = log.New(io.Discard, "", 0)
	}
	if port == "0" { // a port of its own: nobody could join it
		c, err := StartConsole(opts.Addr, opts.Log)
		if err != nil {
			return nil, err
		}
		c.label = serverLabel(os.Getpid(), opts.Name)
		if opts.Ready != nil {
			opts.Ready(roleHub, c.url, c.token)
		}
		return c, nil
	}
	addr := net.JoinHostPort(host, port)
	sock := filepath.Join(opts.RuntimeDir, "console-"+strings.NewReplacer(":", "_", "[", "", "]", "").Replace(addr)+".sock")
	var sockErr error
	if !filepath.IsAbs(sock) || len(sock) > maxSocketPath {
		// The console still works, for this server alone.
		sockErr = fmt.Errorf("the rendezvous socket %s is not an absolute path of at most %d bytes, so the console is not shared with other servers; set XDG_RUNTIME_DIR to a shorter private folder",
			sock, maxSocketPath)
	}
	c := newConsole([]string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port})
	c.log = opts.Log
	c.url = "http://" + addr + "/"
	c.label = serverLabel(os.Getpid(), opts.Name)
	in := &inbox{c: c, opts: opts, addr: addr, sock: sock, sockErr: sockErr, uid: os.Geteuid(), stop: make(chan struct{}), ended: make(chan struct{}),
		role: roleConnecting}
	c.inbox = in
	ln, err := net.Listen("tcp", addr)
	switch {
	case err == nil:
		in.becomeHub(ln, false)
		close(in.ended)
	case errors.Is(err, syscall.EADDRINUSE):
		go in.run()
	default:
		return nil, fmt.Errorf("approval console: %w", err)
	}
	return c, nil
}

// serverLabel is how a server's asks are labelled on the page.
func serverLabel(pid int, name string) string {
	s := fmt.Sprintf("pid %d", pid)
	if name = display.Escape(name); name != "" {
		s += " " + name
	}
	return s
}

// run settles the console again and again until Close: take the address or
// join the hub; when the hub goes away, try again at once; when neither
// works, say why and retry after a pause.
func (in *inbox) run() {
	defer close(in.ended)
	pause := time.Second
	for !in.isClosed() {
		hubbed, err := in.settle()
		if hubbed {
			return // the hub serves until Close
		}
		if err == nil {
			pause = time.Second
			continue // joined, and the link ended: the hub may be gone, take over
		}
		in.down(err)
		select {
		case <-in.stop:
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 10*time.Second)
	}
}

// joinGrace is how long a server waits for the socket of a hub that holds
// the address but may still be starting (or going away).
const joinGrace = 3 * time.Second

// settle becomes the hub (hubbed), or joins the hub and serves the link
// until it ends (nil), or returns why it can do neither.
func (in *inbox) settle() (hubbed bool, err error) {
	grace := in.opts.grace
	if grace <= 0 {
		grace = joinGrace
	}
	give := time.Now().Add(grace)
	for {
		ln, err := net.Listen("tcp", in.addr)
		if err == nil {
			return in.becomeHub(ln, true), nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return false, fmt.Errorf("approval console %s: %w", in.addr, err)
		}
		w, r, err := in.dial()
		if err == nil {
			in.serveLink(w, r)
			return false, nil
		}
		var foreign *foreignError
		if errors.As(err, &foreign) || time.Now().After(give) {
			return false, in.heldBy(err)
		}
		select {
		case <-in.stop:
			return false, errConsoleDown
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// foreignError is a rendezvous socket served by another user.
type foreignError struct{ msg string }

func (e *foreignError) Error() string { return e.msg }

// heldBy is the error for an address this server can neither take nor
// join, naming its holder where it can be found.
func (in *inbox) heldBy(why error) error {
	holder := ""
	if in.opts.Holder != nil {
		holder = in.opts.Holder(in.addr)
	}
	if holder == "" {
		holder = "something this server cannot identify"
	}
	return fmt.Errorf("approval console %s is in use by %s, which is not an onellm-mcp console of this user that this server can join (%v); free the address or choose another [approval] console (servers share one console only when they see the same XDG_RUNTIME_DIR, or without one the same state folder)",
		in.addr, holder, why)
}

// down marks the console unavailable: asks that wait on it alone are
// denied (approval_unavailable) and new ones are not listed until it is
// back. Each distinct reason is said once.
func (in *inbox) down(err error) {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	in.role = roleDown
	// Whatever holds the address may be sent the person's login cookie,
	// or the login URL: no token is handed out until the console is back,
	// with fresh credentials (becomeHub).
	in.token = ""
	say := err.Error() != in.lastErr
	in.lastErr = err.Error()
	in.mu.Unlock()
	if say {
		in.c.log.Printf("approval console: ERROR: %v", err)
	}
	in.c.failAlone()
}

// accepting is nil when an ask may be listed (the console is serving,
// joined or about to be).
func (in *inbox) accepting() error {
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.role == roleDown || in.closed {
		return errConsoleDown
	}
	return nil
}

func (in *inbox) isClosed() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.closed
}

// close ends the inbox: the hub's socket is removed before the console's
// address is freed, so a peer taking over never meets a stale one.
func (in *inbox) close() {
	if in == nil {
		return
	}
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	in.closed = true
	close(in.stop)
	h, l := in.hub, in.link
	in.mu.Unlock()
	if h != nil {
		h.close()
	}
	if l != nil {
		l.close()
	}
	<-in.ended
	in.c.failAlone() // a server that leaves takes its asks with it
}

// loginURL is the console's address with the token that logs in; "" when
// this server is neither the hub nor joined to it: whatever holds the
// address then would be handed the token.
func (in *inbox) loginURL() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed || in.token == "" || in.role != roleHub && in.role != rolePeer {
		return ""
	}
	return in.c.url + "?token=" + in.token
}

func (in *inbox) ready(role string) {
	in.mu.Lock()
	tok := in.token
	in.lastErr = ""
	in.mu.Unlock()
	if in.opts.Ready == nil {
		in.c.log.Printf("approval console: %s at %s (%s)", role, in.c.url, in.c.label)
		return
	}
	in.opts.Ready(role, in.c.url, tok)
}

// becomeHub serves the console on ln and opens the rendezvous socket.
// fresh (every time but the first start on a free address) gives the
// console a new token and CSRF token and forgets its logins: anything
// handed out while the address was not this server's may have reached
// whoever held it.
func (in *inbox) becomeHub(ln net.Listener, fresh bool) bool {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		ln.Close()
		return true
	}
	in.mu.Unlock()
	// Only this goroutine sets up the console (Close waits for it to end).
	if fresh {
		in.c.renew()
	}
	in.c.serve(ln)
	in.mu.Lock()
	in.role, in.token = roleHub, in.c.token
	in.mu.Unlock()
	h, err := listenHub(in)
	if err != nil {
		in.c.log.Printf("approval console: other servers cannot join this console: %v", err)
	} else {
		in.mu.Lock()
		in.hub = h
		closed := in.closed
		in.mu.Unlock()
		if closed {
			h.close()
		}
	}
	in.ready(roleHub)
	return true
}

// renew gives the console a new token and CSRF token and forgets its
// logins. Called before the console serves.
func (c *Console) renew() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.token, c.csrf = randomID(), randomID()
	c.sessions = map[string]string{}
}

// failAlone denies the pending asks that wait on the console alone.
func (c *Console) failAlone() {
	c.mu.Lock()
	var alone []*ticket
	for _, t := range c.pending {
		if t.alone {
			alone = append(alone, t)
		}
	}
	c.mu.Unlock()
	for _, t := range alone {
		t.resolve(answer{Channel: ChannelConsole, Err: errConsoleDown})
	}
}

// peerUID is the uid of the process at the other end of a unix socket.
func peerCred(conn *net.UnixConn) (*unix.Ucred, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return nil, err
	}
	return cred, cerr
}

// wireConn writes messages to one connection from many goroutines,
// through a bounded queue: a peer or hub that stops reading is dropped, it
// never blocks the writer (who may hold the console's lock).
type wireConn struct {
	conn  *net.UnixConn
	out   chan []byte
	once  sync.Once
	ended chan struct{}
}

const (
	wireQueue        = 4 * maxPending
	wireWriteTimeout = 5 * time.Second
)

func newWireConn(conn *net.UnixConn) *wireConn {
	w := &wireConn{conn: conn, out: make(chan []byte, wireQueue), ended: make(chan struct{})}
	go w.write()
	return w
}

func (w *wireConn) write() {
	for {
		select {
		case <-w.ended:
			return
		case b := <-w.out:
			w.conn.SetWriteDeadline(time.Now().Add(wireWriteTimeout))
			if _, err := w.conn.Write(b); err != nil {
				w.close()
				return
			}
		}
	}
}

// send queues m; it reports false (and drops the connection) when it
// cannot.
func (w *wireConn) send(m *wireMessage) bool {
	b, err := encodeWire(m)
	if err != nil {
		return false
	}
	select {
	case <-w.ended:
		return false
	case w.out <- b:
		return true
	default:
		w.close()
		return false
	}
}

func (w *wireConn) close() {
	w.once.Do(func() { close(w.ended); w.conn.Close() })
}
