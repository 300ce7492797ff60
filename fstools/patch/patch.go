// Package patch is the pure patch engine behind the apply_patch tool.
//
// It owns three things, all of them bytes in, bytes out, with no file-system
// access, no policy and no MCP wiring (the fstools package does those):
//
//   - Parse reads a patch, either a unified diff as `git diff` and `diff -u`
//     write it or a "*** Begin Patch" … "*** End Patch" envelope (the
//     OpenAI/Codex apply_patch format), into one FileChange per file.
//   - Apply places the hunks of one FileChange in a file's content and returns
//     the new content with statistics (hunks, lines added and removed, the
//     offsets and fuzz used). A hunk that cannot be placed is a *HunkError that
//     names the closest text found in the file.
//   - ApplyEdit replaces an exact piece of text (the "edits" input shape).
//
// Line endings (LF or CRLF, per file), a UTF-8 byte order mark and the
// final-newline state of a file are kept; a patch written with LF lines
// applies to a CRLF file and the reverse.
package patch

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// MaxPatchBytes is the largest patch Parse accepts.
const MaxPatchBytes = 16 << 20

// Op is what a FileChange does to its file.
type Op int

const (
	// OpAdd creates NewPath.
	OpAdd Op = iota + 1
	// OpUpdate changes OldPath; a rename is an OpUpdate whose NewPath differs
	// from OldPath, and it may have no hunks (a pure rename or mode change).
	OpUpdate
	// OpDelete removes OldPath.
	OpDelete
)

func (o Op) String() string {
	switch o {
	case OpAdd:
		return "add"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Format is the patch syntax a FileChange was read from. It decides how hunks
// are placed: by line numbers for unified diffs, by anchors and a forward
// cursor for envelopes.
type Format int

const (
	FormatUnified Format = iota + 1
	FormatEnvelope
)

// FileChange is the change a patch makes to one file.
type FileChange struct {
	Op Op
	// OldPath and NewPath are relative slash-separated paths as written in the
	// patch, with the a/ and b/ prefixes stripped. OldPath is empty for
	// OpAdd, NewPath is empty for OpDelete, both are set (and equal unless
	// renamed) for OpUpdate.
	OldPath, NewPath string
	// OldMode and NewMode are git file modes (e.g. 0o100644, 0o100755); 0
	// when the patch does not say.
	OldMode, NewMode uint32
	Hunks            []Hunk
	Format           Format
	// CRLF reports that most added lines in the patch ended in CRLF. Apply
	// uses it for the new content's line endings only when the original
	// content has none to copy (a new file, or an empty or one-line file).
	CRLF bool
	// Line is the 1-based line of the patch where this file's section starts.
	Line int
}

// Path is the path the change produces: NewPath, or OldPath for a deletion.
func (fc FileChange) Path() string {
	if fc.Op == OpDelete {
		return fc.OldPath
	}
	return fc.NewPath
}

// IsRename reports an OpUpdate that moves the file.
func (fc FileChange) IsRename() bool {
	return fc.Op == OpUpdate && fc.OldPath != fc.NewPath
}

// Hunk is one block of changes.
type Hunk struct {
	// OldStart, OldLines, NewStart, NewLines are the numbers of a unified
	// hunk header (1-based starts; a start is the line after which to insert
	// when its count is 0). They are 0 for envelope hunks.
	OldStart, OldLines, NewStart, NewLines int
	// Header is the hunk's header line as written, e.g. "@@ -3,7 +3,8 @@ func f()"
	// or "@@ class Foo" in an envelope, for messages.
	Header string
	Lines  []Line
	// Anchors are the envelope's "@@ text" lines before this hunk's body:
	// each is found, in order, after the previous hunk, and the hunk is
	// placed after the last one.
	Anchors []string
	// AtEOF means the hunk must match at the end of the file (the envelope's
	// "*** End of File", or a unified hunk whose old side ends without a
	// newline).
	AtEOF bool
	// Line is the 1-based line of the patch where the hunk starts.
	Line int
}

// Line is one line of a hunk.
type Line struct {
	// Kind is ' ' (context), '-' (removed) or '+' (added).
	Kind byte
	// Text is the line without its line ending.
	Text string
	// NoNewline is set when "\ No newline at end of file" followed the line.
	NoNewline bool
}

// Parse reads a unified diff or a "*** Begin Patch" envelope. Errors name the
// patch line at fault. Every path returned is relative, without NUL bytes and
// without ".." components.
func Parse(text string) ([]FileChange, error) {
	if len(text) > MaxPatchBytes {
		return nil, fmt.Errorf("patch is %d bytes, more than the limit of %d bytes", len(text), MaxPatchBytes)
	}
	if i := strings.IndexByte(text, 0); i >= 0 {
		return nil, fmt.Errorf("line %d: patch contains a NUL byte", 1+strings.Count(text[:i], "\n"))
	}
	lines := splitPatch(text)
	if transportCRLF(lines) {
		for i, l := range lines {
			lines[i], _ = trimCR(l)
		}
	}
	begin, unified := -1, firstUnifiedHeader(lines)
	for i, l := range lines {
		if strings.TrimSpace(l) == "*** Begin Patch" {
			begin = i
			break
		}
	}
	var (
		fcs []FileChange
		err error
	)
	switch {
	case begin >= 0 && (unified < 0 || begin < unified):
		// Text before the envelope (a fence, "apply_patch <<'EOF'") is skipped.
		fcs, err = parseEnvelope(lines, begin)
	case unified >= 0:
		fcs, err = parseUnified(lines)
	case containsBinary(lines):
		return nil, errors.New("binary patches are not supported")
	default:
		return nil, errors.New("not a patch: expected a unified diff (---/+++ headers) or a *** Begin Patch envelope")
	}
	if err != nil {
		return nil, err
	}
	for _, fc := range fcs {
		if (fc.Op != OpAdd && fc.OldPath == "") || (fc.Op != OpDelete && fc.NewPath == "") {
			return nil, fmt.Errorf("line %d: the file header names no path", fc.Line)
		}
		for _, p := range []string{fc.OldPath, fc.NewPath} {
			if p == "" {
				continue
			}
			if err := checkPath(p); err != nil {
				return nil, fmt.Errorf("line %d: %w", fc.Line, err)
			}
		}
	}
	return fcs, nil
}

// splitPatch splits on "\n", keeping a trailing "\r" on each line, and drops
// the empty piece after a final newline.
func splitPatch(text string) []string {
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// transportCRLF reports a patch whose own lines end in CRLF, judged by its
// header and marker lines (content lines may carry a file's CRLF endings
// inside an LF patch, as git diff writes them).
func transportCRLF(lines []string) bool {
	crlf, lf := 0, 0
	for _, l := range lines {
		for _, p := range []string{"@@", "diff ", "index ", "--- ", "+++ ", "***", "new file mode", "deleted file mode"} {
			if strings.HasPrefix(l, p) {
				if strings.HasSuffix(l, "\r") {
					crlf++
				} else {
					lf++
				}
				break
			}
		}
	}
	return crlf > lf
}

// trimCR removes one trailing "\r" and reports whether there was one.
func trimCR(s string) (string, bool) {
	if strings.HasSuffix(s, "\r") {
		return s[:len(s)-1], true
	}
	return s, false
}

// firstUnifiedHeader returns the index of the first "diff --git" line or
// "---"/"+++" pair, or -1.
func firstUnifiedHeader(lines []string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, "diff --git ") ||
			strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			return i
		}
	}
	return -1
}

func containsBinary(lines []string) bool {
	for _, l := range lines {
		if isBinaryLine(l) {
			return true
		}
	}
	return false
}

func isBinaryLine(l string) bool {
	l, _ = trimCR(l)
	return strings.HasPrefix(l, "GIT binary patch") ||
		(strings.HasPrefix(l, "Binary files ") && strings.HasSuffix(l, " differ"))
}

// checkPath refuses paths that could leave the folder the patch applies to.
func checkPath(p string) error {
	switch {
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("path %q contains a NUL byte", p)
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`):
		return fmt.Errorf("path %q is absolute; patches must use relative paths", p)
	case len(p) >= 2 && p[1] == ':' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z'):
		return fmt.Errorf("path %q is absolute; patches must use relative paths", p)
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("path %q names a folder, not a file", p)
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return fmt.Errorf("path %q has a \"..\" component", p)
		}
	}
	return nil
}

// lineErr builds a "line N: ..." error.
func lineErr(line int, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

// quoteLines renders a few lines for a message.
func quoteLines(buf *bytes.Buffer, firstLine int, lines []string) {
	for i, l := range lines {
		if firstLine > 0 {
			fmt.Fprintf(buf, "\n  %d: %q", firstLine+i, l)
		} else {
			fmt.Fprintf(buf, "\n  %q", l)
		}
	}
}
