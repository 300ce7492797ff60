package webtools

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// TestRedactPrefix: the cut never leaves part of a value, whatever the cap,
// the value's form or where it lies against the cap.
func TestRedactPrefix(t *testing.T) {
	sec := []Secret{{Name: "k", Value: "SECRETVALUE123"}}
	b64 := base64.StdEncoding.EncodeToString([]byte("SECRETVALUE123"))
	for _, body := range []string{
		"abcSECRETVALUE123def",
		strings.Repeat("x", 30) + "SECRETVALUE123" + strings.Repeat("y", 30),
		"SECRETVALUE123SECRETVALUE123SECRETVALUE123",
		"a" + b64 + "b" + b64,
		"SECRETVALUE12", // a prefix only: not a value, kept
	} {
		for maxOut := 0; maxOut <= len(body)+20; maxOut++ {
			for _, complete := range []bool{true, false} {
				out, truncated := redactPrefix(body, sec, maxOut, complete)
				if len(out) > maxOut {
					t.Fatalf("%q cap %d: %d bytes out", body, maxOut, len(out))
				}
				if strings.Contains(out, "SECRETVALUE123") || strings.Contains(out, b64) {
					t.Fatalf("%q cap %d: value left in %q", body, maxOut, out)
				}
				if body != "SECRETVALUE12" && !complete {
					// a partial value at the cut is a leak too
					for n := 4; n < len("SECRETVALUE123"); n++ {
						if strings.HasSuffix(out, "SECRETVALUE123"[:n]) {
							t.Fatalf("%q cap %d: partial value at the end of %q", body, maxOut, out)
						}
					}
				}
				if !complete && !truncated {
					t.Fatalf("incomplete body reported whole")
				}
			}
		}
		if out, tr := redactPrefix(body, sec, 1<<20, true); tr || out != Redact(body, sec) {
			t.Fatalf("%q whole: %q %v, Redact says %q", body, out, tr, Redact(body, sec))
		}
	}
}

// TestDoRedactsBeforeCut: a value straddling max_bytes is redacted, not cut
// into a prefix that escapes redaction; a NUL under text/plain is binary.
func TestDoRedactsBeforeCut(t *testing.T) {
	const token = "tok-0123456789abcdefghijklmnop"
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(strings.Repeat("a", 90) + r.Header.Get("Authorization") + strings.Repeat("z", 200)))
		case "/nul":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write([]byte("text\x00with a zero byte" + strings.Repeat("!", 100)))
		}
	})
	d := newDNS(map[string]string{"api.a.test": "127.0.0.1"})
	c := client(d)
	secrets := []Secret{{Name: "gh", Value: token, Hosts: []string{"api.a.test"}, Header: "Authorization"}}
	allow := (&recorder{allowPrivate: true}).decide
	for max := int64(85); max < 130; max++ {
		resp, err := c.Do(context.Background(), Request{URL: s.url("api.a.test", "/echo"), Secrets: secrets, MaxBytes: max}, allow)
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Truncated || int64(len(resp.Body)) > max || resp.Bytes > max {
			t.Fatalf("max %d: truncated %v, %d bytes", max, resp.Truncated, len(resp.Body))
		}
		tail := strings.TrimLeft(resp.Body, "a")
		if strings.Contains(tail, "tok-") || (len(tail) > 0 && !strings.HasPrefix("[REDACTED:gh]", tail) && !strings.HasPrefix(tail, "[REDACTED:gh]")) {
			t.Fatalf("max %d: body ends %q", max, tail)
		}
		if max >= 90+int64(len("[REDACTED:gh]")) && !strings.Contains(resp.Body, "[REDACTED:gh]") {
			t.Fatalf("max %d: no redaction mark in %q", max, resp.Body)
		}
	}
	resp, err := c.Do(context.Background(), Request{URL: s.url("api.a.test", "/nul"), MaxBytes: 50}, allow)
	if err != nil || !resp.BodyBase64 || !resp.Truncated || resp.Bytes != 50 {
		t.Fatalf("%v %+v", err, resp)
	}
	raw, _ := base64.StdEncoding.DecodeString(resp.Body)
	if len(raw) != 50 || !bytes.HasPrefix(raw, []byte("text\x00with")) {
		t.Fatalf("raw %q", raw)
	}
}
