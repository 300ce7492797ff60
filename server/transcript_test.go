package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/testkit"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
)

var update = flag.Bool("update", false, "rewrite the transcripts' expected exchanges and audit logs")

func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper() // the sandbox helper is this test binary re-executed
	os.Exit(m.Run())
}

// TestTranscripts replays each testdata/transcripts/*.txtar in-process: the
// server the command line builds (Open: every built-in tool, the approval
// broker, the audit log) serves the archive's config over stdio pipes; each
// "> " line of the exchange is sent, and what the server sends back — its
// responses, and its own requests such as elicitation/create — must be the
// "< " blocks that follow, with the audit log it wrote after. Volatile
// values are normalised ($ROOT, $PORT, $STATE, …); a client line may use
// $STATE (the last requestState), $REQID (the id of the server's last
// request), $ROOT and $HTTP (a local test server). Refresh with -update.
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/transcripts/*.txtar")
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) { runTranscript(t, file) })
	}
}

// txtarFile is one file of a txtar archive.
type txtarFile struct {
	name string
	data []byte
}

// parseTxtar reads a txtar archive: a comment, then files each introduced
// by a line "-- NAME --".
func parseTxtar(b []byte) (comment []byte, files []txtarFile) {
	var cur *txtarFile
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		s := strings.TrimRight(string(line), "\n")
		if name, ok := strings.CutPrefix(s, "-- "); ok && strings.HasSuffix(name, " --") {
			files = append(files, txtarFile{name: strings.TrimSuffix(name, " --")})
			cur = &files[len(files)-1]
			continue
		}
		if cur == nil {
			comment = append(comment, line...)
		} else {
			cur.data = append(cur.data, line...)
		}
	}
	return comment, files
}

func formatTxtar(comment []byte, files []txtarFile) []byte {
	out := append([]byte(nil), comment...)
	for _, f := range files {
		out = append(out, "-- "+f.name+" --\n"...)
		out = append(out, f.data...)
	}
	return out
}

// session is a server on pipes and what the transcript has seen so far.
type session struct {
	t     *testing.T
	in    io.WriteCloser
	out   *bufio.Reader
	norm  func(string) string
	state string // the last requestState
	reqID string // the id of the server's last request, as JSON
	got   strings.Builder
}

func runTranscript(t *testing.T, file string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	comment, files := parseTxtar(raw)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	httpURL, port := transcriptHTTP(t)
	subst := strings.NewReplacer("$ROOT", root, "$HTTP", httpURL)
	var config, exchange []byte
	for _, f := range files {
		switch {
		case f.name == "config.toml":
			config = []byte(subst.Replace(string(f.data)))
		case f.name == "exchange":
			exchange = f.data
		case strings.HasPrefix(f.name, "ws/") || strings.HasPrefix(f.name, "root/"):
			dst := filepath.Join(root, strings.TrimPrefix(f.name, "root/"))
			os.MkdirAll(filepath.Dir(dst), 0o755)
			if err := os.WriteFile(dst, f.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	os.MkdirAll(ws, 0o755)
	cfgPath := filepath.Join(root, "onellm.toml")
	cfg, err := grants.Parse(append(config, []byte(fmt.Sprintf("\n[audit]\npath = %q\n", filepath.Join(root, "audit.jsonl")))...), cfgPath, root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: root})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(p, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cin, sin := io.Pipe()
	sout, cout := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(ctx, cin, cout) }()
	defer func() {
		sin.Close()
		cancel()
		<-done
		sout.Close()
	}()
	ports := regexp.MustCompile(`\b` + regexp.QuoteMeta(port) + `\b`)
	sess := &session{t: t, in: sin, out: bufio.NewReaderSize(sout, 1<<20), norm: func(line string) string {
		return ports.ReplaceAllString(normaliseVolatile(strings.ReplaceAll(line, root, "$ROOT")), "$$PORT")
	}}
	for _, line := range strings.Split(string(exchange), "\n") {
		if msg, ok := strings.CutPrefix(line, "> "); ok {
			sess.send(strings.NewReplacer("$STATE", sess.state, "$REQID", sess.reqID, "$ROOT", root, "$HTTP", httpURL).Replace(msg), msg)
		}
	}
	auditLog := auditTranscript(t, filepath.Join(root, "audit.jsonl"), sess.norm)
	var out []txtarFile
	for _, f := range files {
		switch f.name {
		case "exchange":
			f.data = []byte(sess.got.String())
		case "audit":
			continue
		}
		out = append(out, f)
	}
	out = append(out, txtarFile{name: "audit", data: []byte(auditLog)})
	want := formatTxtar(comment, out)
	if *update {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(raw, want) {
		t.Errorf("%s differs (run with -update to accept):\n%s", file, lineDiff(string(raw), string(want)))
	}
}

// send writes one client message and reads what the server says until the
// answer to it (or, for a call, a request of the server's own, which the
// next client line answers).
func (s *session) send(msg, written string) {
	s.t.Helper()
	fmt.Fprintf(&s.got, "> %s\n", written)
	if _, err := io.WriteString(s.in, msg+"\n"); err != nil {
		s.t.Fatalf("send %s: %v", msg, err)
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(msg), &head); err != nil {
		s.t.Fatalf("client line is not JSON: %s", msg)
	}
	if len(head.ID) == 0 {
		return // a notification, or our answer to the server: the call's answer follows below
	}
	if head.Method == "" {
		s.read("") // we answered the server's request; the call it was for answers now
		return
	}
	s.read(string(head.ID))
}

// read records server messages until the response with id (any response
// when id is empty) or a request of the server's.
func (s *session) read(id string) {
	for {
		line, err := testkit.ReadLine(s.out, 20*time.Second)
		if err != nil {
			s.t.Fatalf("waiting for the answer to %s: %v", id, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result struct {
				RequestState string `json:"requestState"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			s.t.Fatalf("server line is not JSON: %q", line)
		}
		if m.Result.RequestState != "" {
			s.state = m.Result.RequestState
		}
		isRequest := m.Method != "" && len(m.ID) > 0
		if isRequest {
			// Its id comes from a counter mcp-go shares between servers.
			line = strings.Replace(line, `"id":`+string(m.ID), `"id":"$REQID"`, 1)
		}
		fmt.Fprintf(&s.got, "< %s\n", indentJSON(s.t, s.norm(line)))
		switch {
		case isRequest:
			s.reqID = string(m.ID)
			return
		case m.Method == "" && (id == "" || string(m.ID) == id):
			return
		}
	}
}

var (
	stateField    = regexp.MustCompile(`"requestState":"[^"]*"`)
	durationField = regexp.MustCompile(`"duration_ms":\d+`)
	dateHeader    = regexp.MustCompile(`"Date":"[^"]*"`)
	versionField  = regexp.MustCompile(`"version":"[^"]*"`)
	timeField     = regexp.MustCompile(`"time":"[^"]*",?`)
	chainFields   = regexp.MustCompile(`"seq":\d+,"prev":"[0-9a-f]*",`)
)

func normaliseVolatile(s string) string {
	s = stateField.ReplaceAllString(s, `"requestState":"$$STATE"`)
	s = durationField.ReplaceAllString(s, `"duration_ms":0`)
	s = dateHeader.ReplaceAllString(s, `"Date":"$$DATE"`)
	return versionField.ReplaceAllString(s, `"version":"$$VERSION"`)
}

// auditTranscript is the audit log's decisions and outcomes, one per line,
// without what differs from run to run: times, and the chain (seq, prev)
// and the signed checkpoints, which the audit package's own tests cover.
func auditTranscript(t *testing.T, path string, norm func(string) string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" || strings.Contains(line, `"event":"checkpoint"`) {
			continue
		}
		line = chainFields.ReplaceAllString(timeField.ReplaceAllString(line, ""), "")
		out.WriteString(norm(line) + "\n")
	}
	return out.String()
}

func indentJSON(t *testing.T, line string) string {
	var v any
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		t.Fatalf("not JSON: %q", line)
	}
	b, _ := json.MarshalIndent(v, "  ", "  ")
	return string(b)
}

// transcriptHTTP is a local server for http_request hops: /redirect sends
// the client to /hello on the same host, /elsewhere to localhost.
func transcriptHTTP(t *testing.T) (url, port string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hello", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port+"/hello", http.StatusFound)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://127.0.0.1:" + port, port
}

// lineDiff shows the first lines where two texts differ.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n file: %s\n got:  %s", i+1, x, y)
		}
	}
	return "(same lines)"
}
