package webtools

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/htmlindex"
)

// finish reads the final response into a Response: the body through a cap
// on its decompressed size, text decoded from its charset, secrets redacted.
func (c *Client) finish(resp *http.Response, maxBytes int64, secrets []Secret, method string) (Response, error) {
	out := Response{Status: resp.StatusCode, Headers: map[string]string{}}
	// Read past the cap by the longest redacted form, so a value that
	// starts before the cap is redacted whole before the body is cut.
	data, more, decoded, err := readBody(resp, maxBytes+int64(redactionSlack(secrets)), method)
	if err != nil {
		return Response{}, err
	}
	red := newRedactor(secrets)
	for k, vs := range resp.Header {
		if decoded && (k == "Content-Encoding" || k == "Content-Length") {
			continue
		}
		v := strings.Join(vs, ", ")
		if red != nil {
			v = red.Replace(v)
		}
		out.Headers[http.CanonicalHeaderKey(k)] = v
	}
	out.ContentType = out.Headers["Content-Type"]
	if text, ok := decodeText(resp.Header.Get("Content-Type"), data, more); ok {
		body, truncated := redactPrefix(text, secrets, int(maxBytes), !more)
		if truncated {
			body = string(trimPartialRune([]byte(body)))
		}
		out.Body, out.Truncated, out.Bytes = body, truncated, int64(len(body))
		return out, nil
	}
	// Binary: redact the raw bytes before encoding (a value can only be
	// found reliably in its own encoding), then cut to the cap.
	body, truncated := redactPrefix(string(data), secrets, int(maxBytes), !more)
	out.Body = base64.StdEncoding.EncodeToString([]byte(body))
	out.BodyBase64, out.Truncated, out.Bytes = true, truncated, int64(len(body))
	return out, nil
}

// readBody reads at most maxBytes of the (decompressed) body; truncated says
// there was more. Memory stays at maxBytes plus the decompressor's window,
// however large the body or its compression ratio.
func readBody(resp *http.Response, maxBytes int64, method string) (data []byte, truncated, decoded bool, err error) {
	if method == http.MethodHead || resp.Body == nil {
		return nil, false, false, nil
	}
	var r io.Reader = resp.Body
	switch ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); ce {
	case "gzip", "x-gzip", "deflate":
		br := bufio.NewReader(resp.Body)
		if _, err := br.Peek(1); err == io.EOF {
			return nil, false, true, nil // empty body, nothing to decompress
		}
		if ce == "deflate" {
			r, err = deflateReader(br)
		} else {
			var zr *gzip.Reader
			zr, err = gzip.NewReader(br)
			r = zr
		}
		if err != nil {
			return nil, false, false, fmt.Errorf("response says Content-Encoding %s but the body is not: %v", ce, err)
		}
		decoded = true
	}
	data, err = io.ReadAll(io.LimitReader(r, maxBytes+1))
	if int64(len(data)) > maxBytes {
		return data[:maxBytes], true, decoded, nil
	}
	if err != nil {
		return nil, false, decoded, err
	}
	return data, false, decoded, nil
}

// deflateReader reads HTTP "deflate", which is meant to be zlib but is raw
// deflate from some servers.
func deflateReader(br *bufio.Reader) (io.Reader, error) {
	h, err := br.Peek(2)
	if err == nil && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
		return zlib.NewReader(br)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return flate.NewReader(br), nil
}

// decodeText returns the body as text when its type is textual (text/*,
// JSON, XML, JavaScript, forms, YAML…) or absent and the bytes are UTF-8,
// decoded from the declared charset. Anything else is binary, and so is a
// body whose decoded text holds a NUL byte whatever its declared type: text
// does not, and a model shown it as text would see garbage or lose bytes.
func decodeText(contentType string, data []byte, truncated bool) (string, bool) {
	text, ok := decodeDeclared(contentType, data, truncated)
	if !ok || strings.IndexByte(text, 0) >= 0 {
		return "", false
	}
	return text, true
}

func decodeDeclared(contentType string, data []byte, truncated bool) (string, bool) {
	if truncated {
		data = trimPartialRune(data)
	}
	if strings.TrimSpace(contentType) == "" {
		if utf8.Valid(data) {
			return string(data), true
		}
		return "", false
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(strings.ToLower(contentType), ";")
		mt = strings.TrimSpace(mt)
		params = nil
	}
	if !textual(mt) {
		return "", false
	}
	cs := strings.ToLower(strings.TrimSpace(params["charset"]))
	switch cs {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		if utf8.Valid(data) {
			return string(data), true
		}
		if cs == "" {
			return "", false // undeclared and not UTF-8: keep the bytes exact
		}
		return strings.ToValidUTF8(string(data), "\uFFFD"), true
	}
	enc, err := htmlindex.Get(cs)
	if err != nil {
		if utf8.Valid(data) {
			return string(data), true
		}
		return "", false
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return "", false
	}
	return strings.ToValidUTF8(string(out), "\uFFFD"), true
}

func textual(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-javascript", "application/x-www-form-urlencoded", "application/x-ndjson",
		"application/ndjson", "application/yaml", "application/x-yaml", "application/toml",
		"application/graphql", "application/sql", "application/x-sh", "application/xhtml+xml":
		return true
	}
	return strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") || strings.HasSuffix(mt, "+yaml")
}

// trimPartialRune drops an incomplete UTF-8 sequence cut off by truncation.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return b // ASCII: nothing partial
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}
