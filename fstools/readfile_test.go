package fstools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

func TestReadWindow(t *testing.T) {
	limits := grants.Limits{ReadDefaultBytes: 16, ReadMaxBytes: 40}
	tests := []struct {
		name, content string
		args          ReadFileArgs
		want          string
		res           ReadFileResult
		errMatch      string
	}{
		{name: "whole small file", content: "a\nb\nc\n", want: "a\nb\nc\n", res: ReadFileResult{StartLine: 1, EndLine: 3, TotalLines: 3}},
		{name: "no final newline", content: "a\nb", want: "a\nb", res: ReadFileResult{StartLine: 1, EndLine: 2, TotalLines: 2}},
		{name: "empty file", content: "", want: "", res: ReadFileResult{}},
		{name: "offset", content: "a\nb\nc\n", args: ReadFileArgs{Offset: 2}, want: "b\nc\n", res: ReadFileResult{StartLine: 2, EndLine: 3, TotalLines: 3}},
		{name: "offset and limit", content: "a\nb\nc\nd\n", args: ReadFileArgs{Offset: 2, Limit: 2}, want: "b\nc\n", res: ReadFileResult{StartLine: 2, EndLine: 3, TotalLines: 4}},
		{name: "default window stops at whole lines", content: "0123456789\n0123456789\n0123\n", want: "0123456789\n", res: ReadFileResult{StartLine: 1, EndLine: 1, TotalLines: 3, Truncated: true}},
		{name: "limit uses the hard cap", content: strings.Repeat("0123456789\n", 5), args: ReadFileArgs{Limit: 5}, want: strings.Repeat("0123456789\n", 3), res: ReadFileResult{StartLine: 1, EndLine: 3, TotalLines: 5, Truncated: true}},
		{name: "one long line", content: strings.Repeat("x", 100) + "\nnext\n", want: strings.Repeat("x", 16), res: ReadFileResult{StartLine: 1, EndLine: 1, TotalLines: 2, Truncated: true}},
		{name: "offset past the end", content: "a\n", args: ReadFileArgs{Offset: 5}, errMatch: "past the end"},
		{name: "crlf kept", content: "a\r\nb\r\n", want: "a\r\nb\r\n", res: ReadFileResult{StartLine: 1, EndLine: 2, TotalLines: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, text, err := readWindow(context.Background(), strings.NewReader(tt.content), tt.args, limits)
			if tt.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errMatch) {
					t.Fatalf("err = %v, want %q", err, tt.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if text != tt.want || res != tt.res {
				t.Fatalf("got %q %+v, want %q %+v", text, res, tt.want, tt.res)
			}
		})
	}
}

// A 1x1 PNG.
const pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

func TestReadFileKinds(t *testing.T) {
	p, _ := testPolicy(t, `profile = "interactive-dev"`)
	ws := p.Workspace
	png, _ := base64.StdEncoding.DecodeString(pngBase64)
	mustWrite(t, filepath.Join(ws, "img.png"), string(png))
	mustWrite(t, filepath.Join(ws, "bin.dat"), "\x7fELF\x00\x00\x01")
	mustWrite(t, filepath.Join(ws, "latin1.txt"), "caf\xe9 au lait, tr\xe8s bon, and more text to pass a rune\n")
	mustWrite(t, filepath.Join(ws, "text.txt"), "hello\n")
	if err := os.Mkdir(filepath.Join(ws, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		isError bool
		match   string
		image   bool
	}{
		{path: "text.txt", match: "hello"},
		{path: "img.png", image: true},
		{path: "bin.dat", isError: true, match: "binary file (application/octet-stream"},
		{path: "latin1.txt", isError: true, match: "binary file"},
		{path: "folder", isError: true, match: "is a folder"},
		{path: "fifo", isError: true, match: "not a regular file"},
		{path: "missing.txt", isError: true, match: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			args, _ := json.Marshal(ReadFileArgs{Path: tt.path})
			plan, err := ReadFile{}.Plan(context.Background(), &toolkit.Env{Policy: p}, args)
			if err != nil {
				t.Fatal(err)
			}
			res := plan.Run(context.Background(), toolkit.Grant{}).Tool
			if res.IsError != tt.isError {
				t.Fatalf("isError = %v: %+v", res.IsError, res.Content)
			}
			var img bool
			var text string
			for _, c := range res.Content {
				switch c := c.(type) {
				case mcp.ImageContent:
					img = c.MIMEType == "image/png" && c.Data == pngBase64
				case mcp.TextContent:
					text += c.Text
				}
			}
			if img != tt.image || !strings.Contains(text, tt.match) {
				t.Fatalf("image=%v text=%q, want image=%v and %q", img, text, tt.image, tt.match)
			}
		})
	}
}

func TestReadFilePlanRequests(t *testing.T) {
	p, root := testPolicy(t, `profile = "interactive-dev"`)
	tests := []struct {
		args   string
		cap    grants.Capability
		path   string
		cred   bool
		argErr string
	}{
		{args: `{"path":"a.txt"}`, cap: grants.CapWorkspaceRead, path: p.Workspace + "/a.txt"},
		{args: `{"path":"../b.txt"}`, cap: grants.CapFilesystemRead, path: root + "/b.txt"},
		{args: `{"path":".env"}`, cap: grants.CapWorkspaceRead, path: p.Workspace + "/.env", cred: true},
		{args: `{"path":"a.txt","extra":1}`, argErr: `unknown argument "extra"; accepted: limit, offset, path`},
		{args: `{"path":1}`, argErr: `argument "path": expected a string`},
		{args: `{}`, argErr: `"path" is required`},
		{args: `{"path":"a","offset":-1}`, argErr: "positive"},
		{args: `[1]`, argErr: "JSON object"},
		{args: `{"path":"a"} {}`, argErr: "unexpected data"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			plan, err := ReadFile{}.Plan(context.Background(), &toolkit.Env{Policy: p}, json.RawMessage(tt.args))
			if tt.argErr != "" {
				var ae *toolkit.ArgError
				if err == nil || !strings.Contains(err.Error(), tt.argErr) || !asArgErr(err, &ae) {
					t.Fatalf("err = %v, want ArgError %q", err, tt.argErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := plan.Requests[0]
			if len(plan.Requests) != 1 || r.Capability != tt.cap || r.Target.Path != tt.path || r.HasClass(grants.DataCredential) != tt.cred || r.Target.ToolName != ReadFileName {
				t.Fatalf("requests = %+v", plan.Requests)
			}
		})
	}
}

func asArgErr(err error, target **toolkit.ArgError) bool {
	ae, ok := err.(*toolkit.ArgError)
	*target = ae
	return ok
}

func BenchmarkResolve(b *testing.B) {
	p, _ := testPolicy(b, `profile = "interactive-dev"`)
	mustWrite(b, filepath.Join(p.Workspace, "src/pkg/file.go"), "x")
	for b.Loop() {
		if _, err := Resolve(p, "src/pkg/file.go"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFile4KiB(b *testing.B) {
	p, _ := testPolicy(b, `profile = "interactive-dev"`)
	mustWrite(b, filepath.Join(p.Workspace, "f.txt"), strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 64))
	args := json.RawMessage(`{"path":"f.txt"}`)
	for b.Loop() {
		plan, err := ReadFile{}.Plan(context.Background(), &toolkit.Env{Policy: p}, args)
		if err != nil {
			b.Fatal(err)
		}
		if res := plan.Run(context.Background(), toolkit.Grant{}); res.Tool.IsError {
			b.Fatal(res.Tool.Content)
		}
	}
}

// TestReadWindowHostile: offsets and limits near the integer limits are
// clamped, never wrapped; a huge file is not scanned whole; sparse holes
// are refused as binary; a cancelled read stops.
func TestReadWindowHostile(t *testing.T) {
	limits := grants.Limits{ReadDefaultBytes: 16 << 10, ReadMaxBytes: 1 << 20}
	small := "a\nb\nc\n"
	for _, args := range []ReadFileArgs{{Offset: 2, Limit: math.MaxInt}, {Offset: 1, Limit: math.MaxInt - 1}, {Offset: 3, Limit: math.MaxInt - 2}} {
		res, text, err := readWindow(context.Background(), strings.NewReader(small), args, limits)
		if err != nil || res.EndLine != 3 || !strings.HasSuffix(text, "c\n") {
			t.Errorf("%+v: %v %+v %q", args, err, res, text)
		}
	}
	if _, _, err := readWindow(context.Background(), strings.NewReader(small), ReadFileArgs{Offset: math.MaxInt}, limits); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Errorf("offset MaxInt: %v", err)
	}

	// 1 GiB of lines: a window at the start reads a bounded amount (the
	// bounds scaled down 8 times, so the test is quick).
	const seek, count = maxSeekBytes / 8, maxCountBytes / 8
	huge := &countingReader{r: io.LimitReader(repeatReader("0123456789abcdef\n"), 1<<30)}
	res, _, err := readWindowBounded(context.Background(), huge, ReadFileArgs{Limit: 10}, limits, seek, count, 0)
	if err != nil || res.EndLine != 10 || !res.TotalApprox || res.TotalLines < 10 {
		t.Fatalf("huge: %v %+v", err, res)
	}
	if huge.n > count+1<<20 {
		t.Fatalf("read %d MiB of a 1 GiB file for a 10-line window", huge.n>>20)
	}
	// A window far in: the seek is bounded too.
	huge = &countingReader{r: io.LimitReader(repeatReader("0123456789abcdef\n"), 1<<30)}
	if _, _, err := readWindowBounded(context.Background(), huge, ReadFileArgs{Offset: 60_000_000}, limits, seek, count, 0); err == nil || !strings.Contains(err.Error(), "not within the first") || huge.n > seek+1<<20 {
		t.Fatalf("far offset: %v after %d MiB", err, huge.n>>20)
	}

	// A sparse file: a text head, then a 1 TiB hole.
	f, err := os.Create(filepath.Join(t.TempDir(), "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("head line\n")
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	for _, args := range []ReadFileArgs{{}, {Offset: 2}, {Offset: 1, Limit: 1}} {
		f.Seek(0, io.SeekStart)
		cr := &countingReader{r: f}
		res, text, err := readWindow(context.Background(), cr, args, limits)
		if cr.n > 64<<20 {
			t.Fatalf("%+v: read %d MiB of a sparse file", args, cr.n>>20)
		}
		if err == nil && (args.Limit != 1 || text != "head line\n" || !res.TotalApprox && res.TotalLines > 2) {
			t.Fatalf("%+v: %+v %q", args, res, text)
		}
	}
	f.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cr := &countingReader{r: io.LimitReader(repeatReader("x\n"), 1<<30)}
	if _, _, err := readWindow(ctx, cr, ReadFileArgs{Offset: 100_000_000}, limits); !errors.Is(err, context.Canceled) || cr.n > 2*cancelEvery+1<<16 {
		t.Fatalf("cancelled: %v after %d bytes", err, cr.n)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// repeatReader repeats s for ever.
type repeatReader string

func (s repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], s)
	}
	return n, nil
}

// TestReadFileAroundHead: the text continues from the 512-byte head the
// type check read, so files that end before it, at it and past it come
// back whole, and a window starting past the head is right too.
func TestReadFileAroundHead(t *testing.T) {
	p, _ := testPolicy(t, `profile = "interactive-dev"`)
	for _, size := range []int{0, 1, 15, 16, 17, 511, 512, 513, 1023, 4097, 70_000} {
		var b strings.Builder
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(&b, "line %d of the file\n", i+1)
		}
		content := b.String()[:size]
		name := fmt.Sprintf("f%d.txt", size)
		mustWrite(t, filepath.Join(p.Workspace, name), content)
		lines := strings.SplitAfter(content, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		offsets := []int{0}
		if len(lines) >= 2 {
			offsets = append(offsets, 2, len(lines))
		}
		for _, offset := range offsets {
			t.Run(fmt.Sprintf("%d/%d", size, offset), func(t *testing.T) {
				args, _ := json.Marshal(ReadFileArgs{Path: name, Offset: offset, Limit: len(lines) + 1})
				plan, err := ReadFile{}.Plan(context.Background(), &toolkit.Env{Policy: p}, args)
				if err != nil {
					t.Fatal(err)
				}
				res := plan.Run(context.Background(), toolkit.Grant{}).Tool
				want := strings.Join(lines[min(max(offset, 1)-1, len(lines)):], "")
				if res.IsError || len(res.Content) != 1 {
					t.Fatalf("%+v", res.Content)
				}
				got := res.Content[0].(mcp.TextContent).Text
				out := res.StructuredContent.(ReadFileResult)
				if got != want || out.TotalLines != len(lines) || out.SizeBytes != int64(size) {
					t.Fatalf("text %d bytes (want %d), total %d (want %d), size %d", len(got), len(want), out.TotalLines, len(lines), out.SizeBytes)
				}
			})
		}
	}
}

// TestMayBeImage: every head the sniffer names one of imageTypes passes
// mayBeImage, for each signature, cut short, mutated byte by byte and
// with text before it; text and other binary formats do not.
func TestMayBeImage(t *testing.T) {
	webp := "RIFF\x10\x00\x00\x00WEBPVP8 "
	heads := []string{"\x89PNG\r\n\x1a\n\x00\x00", "\xFF\xD8\xFF\xE0", "GIF87a", "GIF89a\x01", webp,
		"hello", " \x89PNG\r\n\x1a\n", "%PDF-1.7", "<html>", "\xEF\xBB\xBFtext", "\xFF\xFEx", "PK\x03\x04", ""}
	var all []string
	for _, h := range heads {
		for cut := 0; cut <= len(h); cut++ {
			all = append(all, h[:cut])
		}
		for i := range len(h) {
			for _, c := range []byte{0x00, ' ', 'A', 0xFF, h[i] ^ 0x20} {
				b := []byte(h)
				b[i] = c
				all = append(all, string(b))
			}
		}
	}
	for _, h := range all {
		if sniffed := http.DetectContentType([]byte(h)); imageTypes[sniffed] && !mayBeImage([]byte(h)) {
			t.Errorf("%q is sniffed as %s but mayBeImage says no", h, sniffed)
		}
	}
	for _, h := range []string{"hello", "%PDF-1.7", "<html>", "PK\x03\x04", ""} {
		if mayBeImage([]byte(h)) {
			t.Errorf("mayBeImage(%q) = true", h)
		}
	}
}

// TestIsBinary covers the text fast path and the rune-by-rune rest.
func TestIsBinary(t *testing.T) {
	tests := []struct {
		head string
		want bool
	}{
		{"plain text\n", false},
		{"héllo wörld ✓", false},
		{"", false},
		{"nul\x00byte", true},
		{"bad \xff utf8 here", true},
		{"cut rune at the end \xe2\x9c", false},
		{"\xe2\x9c", false}, // shorter than UTFMax: may be a cut rune
		{"bad \xc3\x28 pair", true},
	}
	for _, tt := range tests {
		if got := isBinary([]byte(tt.head)); got != tt.want {
			t.Errorf("isBinary(%q) = %v, want %v", tt.head, got, tt.want)
		}
	}
}
