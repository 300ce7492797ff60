package fstools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sys/unix"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// ReadFileName is the read_file tool's public name.
const ReadFileName = "read_file"

// ReadFileArgs are read_file's arguments.
type ReadFileArgs struct {
	Path   string `json:"path" jsonschema:"File to read: absolute, ~/…, or relative to the workspace"`
	Offset int    `json:"offset,omitempty" jsonschema:"First line to return (1-based)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"Number of lines to return"`
}

// ReadFileResult is read_file's structured result for text.
type ReadFileResult struct {
	Path       string `json:"path"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
	// TotalApprox marks TotalLines as a lower bound: the file goes on past
	// what was counted (8 MiB beyond the window).
	TotalApprox bool  `json:"total_lines_approximate,omitempty"`
	SizeBytes   int64 `json:"size_bytes"`
	Truncated   bool  `json:"truncated"`
}

// ReadFile is the read_file tool.
type ReadFile struct{}

// Name implements toolkit.Tool.
func (ReadFile) Name() string { return ReadFileName }

// Capabilities implements toolkit.Tool.
func (ReadFile) Capabilities() []grants.Capability {
	return []grants.Capability{grants.CapWorkspaceRead, grants.CapFilesystemRead}
}

// Definition implements toolkit.Tool.
func (t ReadFile) Definition(p *grants.Policy) mcp.Tool {
	desc := fmt.Sprintf("Read a text file, or a window of its lines (offset is the 1-based first line, limit the number of lines). "+
		"Without a limit up to %d bytes of whole lines are returned; the hard cap is %d bytes. "+
		"PNG, JPEG, GIF and WebP images come back as images; other binary files are refused. "+
		"Relative paths are resolved against the workspace %s.\n\n%s",
		p.Limits.ReadDefaultBytes, p.Limits.ReadMaxBytes, p.Workspace, p.Summary(t.Capabilities()...))
	return mcp.NewTool(ReadFileName,
		mcp.WithDescription(desc),
		toolkit.WithSchemas(toolkit.EmbeddedSchema(schemaFiles, "read_file.input.json"), toolkit.EmbeddedSchema(schemaFiles, "read_file.output.json")),
		mcp.WithToolAnnotation(toolkit.Annotations("Read file", true, false, true, false)),
	)
}

// Plan implements toolkit.Tool.
func (ReadFile) Plan(_ context.Context, env *toolkit.Env, raw json.RawMessage) (*toolkit.Plan, error) {
	var args ReadFileArgs
	if err := toolkit.Decode(raw, &args); err != nil {
		return nil, err
	}
	if args.Path == "" {
		return nil, toolkit.Argf("argument \"path\" is required")
	}
	if args.Offset < 0 || args.Limit < 0 {
		return nil, toolkit.Argf("offset and limit must be positive")
	}
	res, err := Resolve(env.Policy, args.Path)
	if err != nil {
		return nil, toolkit.Argf("path %q: %v", args.Path, err)
	}
	req := res.Request(ReadFileName, res.ReadCapability())
	limits := env.Policy.Limits
	return &toolkit.Plan{
		Requests: []grants.Request{req},
		Run: func(ctx context.Context, _ toolkit.Grant) toolkit.Result {
			r := readFile(ctx, res.Real, args, limits)
			if !r.Tool.IsError && req.HasClass(grants.DataCredential) {
				r.Outcome.Exposed = []grants.DataClass{grants.DataCredential}
			}
			return r
		},
	}, nil
}

// imageTypes are the image formats returned as image content.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// mayBeImage reports whether head starts as every file does that
// http.DetectContentType names one of imageTypes (PNG, JPEG, GIF, WebP
// signatures, none after leading space): only such a head is sniffed, so a
// text file is not matched against every signature the sniffer knows
// (TestMayBeImage).
func mayBeImage(head []byte) bool {
	for _, magic := range [...]string{"\x89PNG", "\xFF\xD8\xFF", "GIF8", "RIFF"} {
		if bytes.HasPrefix(head, []byte(magic)) {
			return true
		}
	}
	return false
}

func readFile(ctx context.Context, real string, args ReadFileArgs, limits grants.Limits) toolkit.Result {
	fd, err := openNoSymlinksFD(real, os.O_RDONLY|0x800 /* O_NONBLOCK: a FIFO must not hang the call */, 0)
	if err != nil {
		return toolkit.Failed("read_file %s: %v", real, unwrap(err))
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return toolkit.Failed("read_file %s: %v", real, &os.PathError{Op: "stat", Path: real, Err: err})
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return toolkit.Failed("read_file %s: is a folder, not a file", real)
	default:
		return toolkit.Failed("read_file %s: not a regular file (%s)", real, modeType(st.Mode))
	}
	f, size := fdReader(fd), st.Size
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	atEOF := err == io.ErrUnexpectedEOF || err == io.EOF
	if err != nil && !atEOF {
		return toolkit.Failed("read_file %s: %v", real, err)
	}
	head = head[:n]
	// What follows goes on from the head already read, with no seek back
	// and no second read of it; a file that ended within the head (most
	// small files) is not read again at all.
	src := &headThen{head: head}
	if !atEOF {
		src.rest = f
	}
	if mayBeImage(head) {
		if ctype := http.DetectContentType(head); imageTypes[ctype] {
			return readImage(src, real, ctype, size, limits.ReadMaxBytes)
		}
	}
	if isBinary(head) {
		return toolkit.Failed("read_file %s: binary file (%s, %d bytes); only text and PNG/JPEG/GIF/WebP images are returned", real, http.DetectContentType(head), size)
	}
	bufSize := max(len(head), 16)
	if !atEOF {
		bufSize = int(min(max(size+1, 4096), 64<<10))
	}
	out, text, err := readWindowBounded(ctx, bufio.NewReaderSize(src, bufSize), args, limits, maxSeekBytes, maxCountBytes, size)
	if err != nil {
		return toolkit.Failed("read_file %s: %v", real, err)
	}
	out.Path, out.SizeBytes = real, size
	return toolkit.Result{
		Tool:    mcp.NewToolResultStructured(out, text),
		Outcome: toolkit.Outcome{Bytes: int64(len(text))},
	}
}

// fdReader reads a regular file's descriptor.
type fdReader int

func (fd fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(fd), p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// modeType names a file type as os.FileMode.Type does, for errors.
func modeType(mode uint32) os.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return os.ModeNamedPipe
	case unix.S_IFSOCK:
		return os.ModeSocket
	case unix.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		return os.ModeDevice
	case unix.S_IFLNK:
		return os.ModeSymlink
	}
	return os.ModeIrregular
}

// headThen reads head, then rest (none when nil).
type headThen struct {
	head []byte
	rest io.Reader
}

func (h *headThen) Read(p []byte) (int, error) {
	if len(h.head) > 0 {
		n := copy(p, h.head)
		h.head = h.head[n:]
		return n, nil
	}
	if h.rest == nil {
		return 0, io.EOF
	}
	return h.rest.Read(p)
}

func readImage(r io.Reader, real, ctype string, size, max int64) toolkit.Result {
	if size > max {
		return toolkit.Failed("read_file %s: %s image of %d bytes is over the %d-byte cap", real, ctype, size, max)
	}
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return toolkit.Failed("read_file %s: %v", real, err)
	}
	if int64(len(data)) > max {
		return toolkit.Failed("read_file %s: image grew over the %d-byte cap while read", real, max)
	}
	return toolkit.Result{
		Tool:    mcp.NewToolResultImage(fmt.Sprintf("%s (%s, %d bytes)", real, ctype, len(data)), base64.StdEncoding.EncodeToString(data), ctype),
		Outcome: toolkit.Outcome{Bytes: int64(len(data))},
	}
}

// isBinary reports whether the head of a file is not text: a NUL byte, or
// bytes that are not UTF-8 (allowing a rune cut at the end of the head).
func isBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if utf8.Valid(head) {
		return false // most text: checked many bytes at a time
	}
	for len(head) > 0 {
		r, size := utf8.DecodeRune(head)
		if r == utf8.RuneError && size <= 1 {
			return len(head) >= utf8.UTFMax // a cut rune at the very end is fine
		}
		head = head[size:]
	}
	return false
}

// Bounds that keep a hostile file (huge, sparse, one endless line) from
// keeping the server busy: the window's first line is looked for in at most
// maxSeekBytes, and lines are counted past the window for at most
// maxCountBytes more; past that the total is marked approximate.
const (
	maxSeekBytes  = 256 << 20
	maxCountBytes = 8 << 20
	// cancelEvery is how many bytes are read between checks for a cancelled call.
	cancelEvery = 1 << 20
)

// window is the lines a read asks for: [start, end), 1-based, end saturated
// so that offset+limit near the integer limits cannot wrap.
func window(args ReadFileArgs) (start, end int) {
	start = max(args.Offset, 1)
	end = math.MaxInt
	if args.Limit > 0 && args.Limit < math.MaxInt-start {
		end = start + args.Limit
	}
	return start, end
}

// readWindow returns lines [offset, offset+limit) within the byte budget,
// and counts the file's lines as far as the bounds above allow. Without a
// limit the budget is the default window; with one, the hard cap. Truncated
// means the text stops before what was asked because the budget ran out.
func readWindow(ctx context.Context, r io.Reader, args ReadFileArgs, limits grants.Limits) (ReadFileResult, string, error) {
	return readWindowBounded(ctx, r, args, limits, maxSeekBytes, maxCountBytes, 0)
}

// growAt is the text's size past which it is grown at once to what the
// file and the budget allow, rather than doubling (each step leaves
// garbage as large: ~2 MiB for a 1 MiB read).
const growAt = 64 << 10

// readWindowBounded is readWindow with the seek and count bounds given,
// and the file's size when known (0 if not).
func readWindowBounded(ctx context.Context, r io.Reader, args ReadFileArgs, limits grants.Limits, seekBytes, countBytes, size int64) (ReadFileResult, string, error) {
	start, stop := window(args)
	budget := limits.ReadDefaultBytes
	if args.Limit > 0 {
		budget = limits.ReadMaxBytes
	}
	budget = min(budget, limits.ReadMaxBytes)
	var (
		buf       strings.Builder // String does not copy
		lineNo    = 1             // the line the next chunk belongs to
		endedInNL = true
		end       int
		truncated bool
		full      bool
		read      int64 // bytes read
		fullAt    int64 // bytes read when the window was complete
		sinceChk  int
		approx    bool
	)
	if size > 0 {
		buf.Grow(int(min(size, budget, growAt))) // one allocation for a small file's text
	}
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if n := len(chunk); n > 0 {
			read += int64(n)
			if !full && bytes.IndexByte(chunk, 0) >= 0 {
				// A sparse file's holes read as NULs: refused at once
				// rather than scanned for a line end.
				return ReadFileResult{}, "", fmt.Errorf("line %d holds a NUL byte: binary data, not text", lineNo)
			}
			if cur := lineNo; cur >= start && !full {
				switch {
				case cur >= stop:
					full = true
				case int64(buf.Len()+n) <= budget:
					if buf.Len()+n > growAt && buf.Len()+n > buf.Cap() && size > read-int64(n) {
						buf.Grow(int(min(size-(read-int64(n)), budget-int64(buf.Len()))))
					}
					buf.Write(chunk)
					end = cur
				case end < cur && buf.Len() > 0:
					full, truncated = true, true // do not start a line that does not fit
				default: // one line longer than the budget: return its head
					buf.Write(chunk[:budget-int64(buf.Len())])
					end, full, truncated = cur, true, true
				}
				if full {
					fullAt = read
				}
			}
			endedInNL = chunk[n-1] == '\n'
			if endedInNL {
				lineNo++
			}
			if sinceChk += n; sinceChk >= cancelEvery {
				sinceChk = 0
				if err := ctx.Err(); err != nil {
					return ReadFileResult{}, "", fmt.Errorf("cancelled after %d bytes: %w", read, err)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return ReadFileResult{}, "", err
		}
		if !full && lineNo <= start && read > seekBytes {
			return ReadFileResult{}, "", fmt.Errorf("line %d is not within the first %d MiB of the file (%d lines read); read it with a command such as sed -n", start, seekBytes>>20, lineNo-1)
		}
		if full && read-fullAt > countBytes {
			approx = true // the rest is not counted: the total is a lower bound
			break
		}
	}
	total := lineNo - 1
	if !endedInNL {
		total = lineNo
	}
	if start > total && total > 0 && !approx {
		return ReadFileResult{}, "", fmt.Errorf("offset %d is past the end of the file (%d lines)", start, total)
	}
	res := ReadFileResult{StartLine: start, EndLine: end, TotalLines: total, TotalApprox: approx, Truncated: truncated}
	if end == 0 {
		res.StartLine = 0
	}
	return res, buf.String(), nil
}
