package webtools

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/onellm/onellm-mcp/grants"
)

// bufConn is a net.Conn that reads a fixed input and records what is
// written: the proxy's parser fed bytes with no network at all.
type bufConn struct {
	r *bytes.Reader
	w bytes.Buffer
}

func (c *bufConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c *bufConn) Write(b []byte) (int, error)      { return c.w.Write(b) }
func (c *bufConn) Close() error                     { return nil }
func (c *bufConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 3128} }
func (c *bufConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000} }
func (c *bufConn) SetDeadline(time.Time) error      { return nil }
func (c *bufConn) SetReadDeadline(time.Time) error  { return nil }
func (c *bufConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzProxyRequest feeds raw bytes to the egress proxy as one client
// connection, with a policy that refuses everything and a resolver that
// never leaves the process. Properties: it never panics and always ends;
// it answers with one HTTP status line and never a success; every
// destination it asks the policy about is well formed (a known method or
// CONNECT, a normalised host, a port in range, a path for plain http).
func FuzzProxyRequest(f *testing.F) {
	for _, s := range []string{
		"GET http://example.com/a?b HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"CONNECT api.test:443 HTTP/1.1\r\nHost: api.test:443\r\n\r\n",
		"CONNECT [::1]:443 HTTP/1.1\r\n\r\n",
		"CONNECT 2130706433:80 HTTP/1.1\r\n\r\n",
		"POST http://API.Test:8080/x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
		"GET /relative HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET https://x/ HTTP/1.1\r\n\r\n",
		"BREW http://x/ HTTP/1.1\r\n\r\n",
		"GET http://u:p@x/ HTTP/1.1\r\n\r\n",
		"GET http://x:99999/ HTTP/1.1\r\n\r\n",
		"CONNECT x HTTP/1.1\r\n\r\n",
		"GET http://x/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n",
		"\r\n\r\n",
		"",
	} {
		f.Add([]byte(s))
	}
	lookup := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var mu sync.Mutex
		var hops []Hop
		p := &Proxy{
			Client: NewClient(Options{Lookup: lookup}),
			Decide: func(_ context.Context, h Hop) (bool, error) {
				mu.Lock()
				hops = append(hops, h)
				mu.Unlock()
				return false, errors.New("refused by the fuzz policy")
			},
			HeaderTimeout: time.Second, IdleTimeout: time.Second, DialTimeout: time.Second,
		}
		c := &bufConn{r: bytes.NewReader(in)}
		p.serveConn(context.Background(), c, &tracker{conns: map[io.Closer]struct{}{}})
		out := c.w.String()
		if out != "" {
			code, ok := strings.CutPrefix(out, "HTTP/1.1 ")
			if !ok || len(code) < 3 {
				t.Fatalf("answer is not a status line: %q", out)
			}
			n, err := strconv.Atoi(code[:3])
			if err != nil || n < 400 {
				t.Fatalf("answer %q to a refused or malformed request", out[:min(len(out), 40)])
			}
		}
		for _, h := range hops {
			if h.Method != http.MethodConnect {
				if _, ok := grants.HTTPCapability(h.Method); !ok {
					t.Fatalf("decided unknown method %q", h.Method)
				}
				if !strings.HasPrefix(h.Path, "/") {
					t.Fatalf("plain http hop without a path: %+v", h)
				}
			}
			if h.Host == "" || h.Host != strings.ToLower(h.Host) || strings.ContainsAny(h.Host, "/@ []") {
				t.Fatalf("decided host %q", h.Host)
			}
			if h.Port < 1 || h.Port > 65535 {
				t.Fatalf("decided port %d", h.Port)
			}
		}
	})
}

// FuzzResponseBody decodes a response body sent in each encoding the
// client accepts, and one that lies about its encoding. Properties: a body
// encoded correctly comes back exactly (up to the cap, with truncated set
// exactly when it was longer); no result is longer than the cap; text is
// valid UTF-8; a configured secret's value never appears in what the model
// gets, as text or inside base64.
func FuzzResponseBody(f *testing.F) {
	const secret = "s3cr3t-VALUE-42"
	for _, s := range []struct {
		body  string
		enc   uint8
		ctype string
		max   uint16
	}{
		{"hello", 0, "text/plain", 100},
		{"hello " + secret + " there", 1, "text/plain; charset=utf-8", 100},
		{"\xff\xfe\x00binary" + secret, 2, "application/octet-stream", 100},
		{"caf\xe9", 3, "text/plain; charset=iso-8859-1", 3},
		{"not gzip at all", 4, "", 50},
		{strings.Repeat("a", 3000), 1, "application/json", 1024},
		{"", 1, "text/html", 0},
	} {
		f.Add([]byte(s.body), s.enc, s.ctype, s.max)
	}
	c := NewClient(Options{})
	f.Fuzz(func(t *testing.T, body []byte, enc uint8, ctype string, max uint16) {
		maxBytes := int64(max)
		if maxBytes == 0 {
			maxBytes = 1
		}
		var buf bytes.Buffer
		header := http.Header{}
		honest := true
		switch enc % 5 {
		case 0:
			buf.Write(body)
		case 1:
			header.Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(&buf)
			zw.Write(body)
			zw.Close()
		case 2:
			header.Set("Content-Encoding", "deflate")
			zw := zlib.NewWriter(&buf)
			zw.Write(body)
			zw.Close()
		case 3:
			header.Set("Content-Encoding", "deflate") // raw deflate, as some servers send
			zw, _ := flate.NewWriter(&buf, flate.DefaultCompression)
			zw.Write(body)
			zw.Close()
		case 4:
			header.Set("Content-Encoding", "gzip") // a lie
			buf.Write(body)
			honest = false
		}
		if ctype != "" {
			header.Set("Content-Type", ctype)
		}
		resp := func() *http.Response {
			return &http.Response{StatusCode: 200, Header: header.Clone(), Body: io.NopCloser(bytes.NewReader(buf.Bytes()))}
		}
		data, truncated, _, err := readBody(resp(), maxBytes, http.MethodGet)
		if int64(len(data)) > maxBytes {
			t.Fatalf("read %d bytes over a cap of %d", len(data), maxBytes)
		}
		if honest && (len(body) > 0 || enc%5 == 0) {
			if err != nil {
				t.Fatalf("encoding %d: %v", enc%5, err)
			}
			want := body[:min(int64(len(body)), maxBytes)]
			if !bytes.Equal(data, want) || truncated != (int64(len(body)) > maxBytes) {
				t.Fatalf("encoding %d: got %q (truncated %v), want %q", enc%5, data, truncated, want)
			}
		}
		if text, ok := decodeText(ctype, data, truncated); ok && !utf8.ValidString(text) {
			t.Fatalf("text is not UTF-8: %q", text)
		}
		out, err := c.finish(resp(), maxBytes, []Secret{{Name: "s", Value: secret}}, http.MethodGet)
		if err != nil {
			return
		}
		got := []byte(out.Body)
		if out.BodyBase64 {
			if got, err = base64.StdEncoding.DecodeString(out.Body); err != nil {
				t.Fatalf("body_base64 is not base64: %v", err)
			}
		}
		if bytes.Contains(got, []byte(secret)) {
			t.Fatalf("the secret's value reached the model: %q", got)
		}
	})
}
