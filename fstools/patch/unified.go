package patch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

const devNull = "/dev/null"

// parseUnified reads the file sections of a unified diff. Text outside file
// sections (a commit message, "Only in" lines, a markdown fence) is skipped.
func parseUnified(lines []string) ([]FileChange, error) {
	var out []FileChange
	for i := 0; i < len(lines); {
		l, _ := trimCR(lines[i])
		switch {
		case strings.HasPrefix(l, "diff --git "):
			fc, next, err := parseGitSection(lines, i)
			if err != nil {
				return nil, err
			}
			out = append(out, fc)
			i = next
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			fc, next, err := parsePlainSection(lines, i)
			if err != nil {
				return nil, err
			}
			out = append(out, fc)
			i = next
		case isBinaryLine(l):
			return nil, lineErr(i+1, "binary patches are not supported")
		case strings.HasPrefix(l, "@@ -"):
			return nil, lineErr(i+1, "hunk %q has no ---/+++ file header before it", l)
		default:
			i++
		}
	}
	if len(out) == 0 {
		return nil, errors.New("not a patch: expected a unified diff (---/+++ headers) or a *** Begin Patch envelope")
	}
	return out, nil
}

// parseGitSection reads one "diff --git" section starting at lines[start].
func parseGitSection(lines []string, start int) (FileChange, int, error) {
	fc := FileChange{Op: OpUpdate, Format: FormatUnified, Line: start + 1}
	head, _ := trimCR(lines[start])
	oldP, newP, haveNames := splitGitNames(strings.TrimPrefix(head, "diff --git "))
	if haveNames {
		oldP, newP = stripComponent(oldP), stripComponent(newP)
	}
	var renameFrom, renameTo string
	isNew, isDeleted := false, false
	i := start + 1
headers:
	for ; i < len(lines); i++ {
		l, _ := trimCR(lines[i])
		n := i + 1
		var err error
		switch {
		case strings.HasPrefix(l, "old mode "):
			fc.OldMode, err = parseMode(l, "old mode ")
		case strings.HasPrefix(l, "new mode "):
			fc.NewMode, err = parseMode(l, "new mode ")
		case strings.HasPrefix(l, "deleted file mode "):
			fc.OldMode, err = parseMode(l, "deleted file mode ")
			isDeleted = true
		case strings.HasPrefix(l, "new file mode "):
			fc.NewMode, err = parseMode(l, "new file mode ")
			isNew = true
		case strings.HasPrefix(l, "rename from "):
			renameFrom, err = unquotePath(strings.TrimPrefix(l, "rename from "))
		case strings.HasPrefix(l, "rename to "):
			renameTo, err = unquotePath(strings.TrimPrefix(l, "rename to "))
		case strings.HasPrefix(l, "rename old "): // git before 1.5
			renameFrom, err = unquotePath(strings.TrimPrefix(l, "rename old "))
		case strings.HasPrefix(l, "rename new "):
			renameTo, err = unquotePath(strings.TrimPrefix(l, "rename new "))
		case strings.HasPrefix(l, "copy from "), strings.HasPrefix(l, "copy to "):
			return fc, 0, lineErr(n, "copy patches are not supported; write the copy as a new file")
		case isBinaryLine(l):
			return fc, 0, lineErr(n, "binary patches are not supported")
		case strings.HasPrefix(l, "similarity index "), strings.HasPrefix(l, "dissimilarity index "):
		case strings.HasPrefix(l, "index "):
			// "index abc..def 100644": the mode when it did not change.
			if f := strings.Fields(l); len(f) == 3 && fc.OldMode == 0 && fc.NewMode == 0 {
				fc.OldMode, err = parseMode(f[2], "")
				fc.NewMode = fc.OldMode
			}
		default:
			break headers
		}
		if err != nil {
			return fc, 0, lineErr(n, "%v", err)
		}
	}
	if i+1 < len(lines) && strings.HasPrefix(lines[i], "--- ") && strings.HasPrefix(lines[i+1], "+++ ") {
		o, err := headerPath(lines[i], "--- ")
		if err != nil {
			return fc, 0, lineErr(i+1, "%v", err)
		}
		nw, err := headerPath(lines[i+1], "+++ ")
		if err != nil {
			return fc, 0, lineErr(i+2, "%v", err)
		}
		if o == devNull {
			isNew = true
		} else {
			oldP = stripComponent(o)
		}
		if nw == devNull {
			isDeleted = true
		} else {
			newP = stripComponent(nw)
		}
		haveNames = true
		i += 2
	}
	if renameFrom != "" || renameTo != "" {
		if renameFrom == "" || renameTo == "" {
			return fc, 0, lineErr(start+1, "rename needs both \"rename from\" and \"rename to\"")
		}
		oldP, newP, haveNames = renameFrom, renameTo, true
	}
	if !haveNames {
		return fc, 0, lineErr(start+1, "cannot tell the two paths apart in %q; add ---/+++ lines", head)
	}
	switch {
	case isNew && isDeleted:
		return fc, 0, lineErr(start+1, "file is both created and deleted")
	case isNew:
		fc.Op, fc.NewPath, fc.OldMode = OpAdd, newP, 0
	case isDeleted:
		fc.Op, fc.OldPath, fc.NewMode = OpDelete, oldP, 0
	default:
		fc.OldPath, fc.NewPath = oldP, newP
	}
	next, err := parseHunks(lines, i, &fc)
	if err != nil {
		return fc, 0, err
	}
	if fc.Op == OpUpdate && fc.OldPath != fc.NewPath && renameFrom == "" {
		// e.g. `git diff --no-index dir1 dir2`: the same file under two roots.
		return fc, 0, lineErr(start+1, "old path %q and new path %q differ but there is no \"rename from\"/\"rename to\" header", fc.OldPath, fc.NewPath)
	}
	return fc, next, nil
}

// parsePlainSection reads a "---"/"+++" section without a "diff --git" line,
// as diff -u writes it.
func parsePlainSection(lines []string, start int) (FileChange, int, error) {
	fc := FileChange{Op: OpUpdate, Format: FormatUnified, Line: start + 1}
	o, oldStamp, err := headerPathStamp(lines[start], "--- ")
	if err != nil {
		return fc, 0, lineErr(start+1, "%v", err)
	}
	nw, newStamp, err := headerPathStamp(lines[start+1], "+++ ")
	if err != nil {
		return fc, 0, lineErr(start+2, "%v", err)
	}
	next, err := parseHunks(lines, start+2, &fc)
	if err != nil {
		return fc, 0, err
	}
	if len(fc.Hunks) == 0 {
		return fc, 0, lineErr(start+1, "file %q has ---/+++ headers but no @@ hunks", nw)
	}
	// diff -N writes a missing side with the epoch as its time stamp.
	onlyHunk := len(fc.Hunks) == 1
	if o == devNull || (onlyHunk && isEpoch(oldStamp) && fc.Hunks[0].OldStart == 0 && fc.Hunks[0].OldLines == 0) {
		fc.Op, fc.NewPath = OpAdd, trimPrefix(nw, "b/")
		return fc, next, nil
	}
	if nw == devNull || (onlyHunk && isEpoch(newStamp) && fc.Hunks[0].NewStart == 0 && fc.Hunks[0].NewLines == 0) {
		fc.Op, fc.OldPath = OpDelete, trimPrefix(o, "a/")
		return fc, next, nil
	}
	p := plainName(o, nw)
	fc.OldPath, fc.NewPath = p, p
	return fc, next, nil
}

// plainName picks the one file a diff -u section changes (diff -u cannot
// express a rename): "a/x"/"b/x" and "old/x"/"new/x" name "x"; otherwise
// the name with the fewest components, then the shortest base name, then the
// shortest name, as GNU patch does.
func plainName(o, n string) string {
	if o == n {
		return o
	}
	oi, ni := strings.IndexByte(o, '/'), strings.IndexByte(n, '/')
	if oi > 0 && ni > 0 && o[oi+1:] == n[ni+1:] {
		return o[oi+1:]
	}
	score := func(p string) [3]int {
		base := p[strings.LastIndexByte(p, '/')+1:]
		return [3]int{strings.Count(p, "/"), len(base), len(p)}
	}
	so, sn := score(o), score(n)
	for k := range so {
		if sn[k] != so[k] {
			if sn[k] < so[k] {
				return n
			}
			return o
		}
	}
	return o
}

func isEpoch(stamp string) bool {
	return strings.HasPrefix(stamp, "1970-01-01") || strings.HasPrefix(stamp, "1969-12-31") ||
		strings.Contains(stamp, "Jan  1 00:00:00 1970") // diff -c style stamps
}

func trimPrefix(p, prefix string) string {
	if strings.HasPrefix(p, prefix) && len(p) > len(prefix) {
		return p[len(prefix):]
	}
	return p
}

// stripComponent removes the first path component, as git apply -p1 does.
func stripComponent(p string) string {
	if i := strings.IndexByte(p, '/'); i >= 0 && i+1 < len(p) {
		return p[i+1:]
	}
	return p
}

func parseMode(line, prefix string) (uint32, error) {
	s := strings.TrimSpace(strings.TrimPrefix(line, prefix))
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, fmt.Errorf("bad file mode %q", s)
	}
	return checkMode(uint32(m))
}

// checkMode accepts the modes git writes for regular files: 100644 and
// 100755 (so no setuid, setgid or sticky bit, no odd permissions).
func checkMode(m uint32) (uint32, error) {
	switch m {
	case 0o100644, 0o100755:
		return m, nil
	case 0o120000:
		return 0, errors.New("symlinks (mode 120000) are not supported")
	case 0o160000:
		return 0, errors.New("submodules (mode 160000) are not supported")
	}
	return 0, fmt.Errorf("file mode %o is not one git writes for a file (100644 or 100755)", m)
}

// headerPath reads the path of a "--- " or "+++ " line.
func headerPath(line, prefix string) (string, error) {
	p, _, err := headerPathStamp(line, prefix)
	return p, err
}

// headerPathStamp reads the path of a "--- " or "+++ " line and the time
// stamp diff -u writes after a TAB.
func headerPathStamp(line, prefix string) (path, stamp string, err error) {
	l, _ := trimCR(line)
	l = strings.TrimPrefix(l, prefix)
	if strings.HasPrefix(l, `"`) {
		q, rest, ok := cutQuoted(l)
		if !ok {
			return "", "", fmt.Errorf("bad quoted path in %q", line)
		}
		p, err := unquotePath(q)
		return p, strings.TrimSpace(rest), err
	}
	if i := strings.IndexByte(l, '\t'); i >= 0 {
		l, stamp = l[:i], strings.TrimSpace(l[i+1:])
	}
	l = strings.TrimRight(l, " ")
	if l == "" {
		return "", "", fmt.Errorf("no path in %q", line)
	}
	return l, stamp, nil
}

// cutQuoted splits a leading C-style quoted string from s.
func cutQuoted(s string) (quoted, rest string, ok bool) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[:i+1], s[i+1:], true
		}
	}
	return "", "", false
}

// unquotePath undoes git's C-style quoting of unusual paths.
func unquotePath(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	p, err := strconv.Unquote(s)
	if err != nil {
		return "", fmt.Errorf("bad quoted path %s", s)
	}
	return p, nil
}

// splitGitNames splits the two names of a "diff --git" line (prefixes still
// on). Unquoted names with spaces are split where both halves name the same
// file; otherwise ok is false and the ---/+++ or rename lines must tell.
func splitGitNames(s string) (a, b string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		q, rest, ok := cutQuoted(s)
		if !ok {
			return "", "", false
		}
		a, err := unquotePath(q)
		if err != nil {
			return "", "", false
		}
		b, err := unquotePath(strings.TrimSpace(rest))
		return a, b, err == nil && b != ""
	}
	if strings.HasSuffix(s, `"`) {
		if i := strings.LastIndex(s, ` "`); i > 0 {
			b, err := unquotePath(s[i+1:])
			return s[:i], b, err == nil
		}
		return "", "", false
	}
	spaces := 0
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			continue
		}
		spaces++
		if stripComponent(s[:i]) == stripComponent(s[i+1:]) {
			return s[:i], s[i+1:], true
		}
	}
	if spaces == 1 {
		i := strings.IndexByte(s, ' ')
		return s[:i], s[i+1:], true
	}
	return "", "", false
}

// parseHunks reads the hunks that start at lines[i] into fc.
func parseHunks(lines []string, i int, fc *FileChange) (int, error) {
	crlf, lf := 0, 0
	for i < len(lines) {
		l, _ := trimCR(lines[i])
		if !strings.HasPrefix(l, "@@") {
			break
		}
		h, next, err := parseHunk(lines, i)
		if err != nil {
			return 0, err
		}
		c, n := h.addedEndings(lines[i+1 : next])
		crlf, lf = crlf+c, lf+n
		fc.Hunks = append(fc.Hunks, h)
		i = next
		// A content line right after a complete hunk means the header's
		// counts are too small: refuse rather than drop those lines.
		if i < len(lines) {
			nl, _ := trimCR(lines[i])
			if nl != "" && nl != "-- " && strings.IndexByte(" +-", nl[0]) >= 0 &&
				!(strings.HasPrefix(nl, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ")) {
				return 0, corrupt(i+1, "%q follows hunk %q, whose counts say it has ended after %d old and %d new lines; fix the counts in the @@ header",
					nl, h.Header, h.OldLines, h.NewLines)
			}
		}
	}
	fc.CRLF = crlf > lf
	return i, nil
}

// addedEndings counts the added lines of h that end in CRLF and in LF, from
// the patch lines the hunk was read from; a line without a newline counts
// for neither.
func (h *Hunk) addedEndings(raw []string) (crlf, lf int) {
	k := 0
	for _, r := range raw {
		if r == "" || r[0] == '\\' || k >= len(h.Lines) {
			if r == "" {
				k++
			}
			continue
		}
		if r[0] == '+' && !h.Lines[k].NoNewline {
			if strings.HasSuffix(r, "\r") {
				crlf++
			} else {
				lf++
			}
		}
		k++
	}
	return crlf, lf
}

// parseHunk reads one "@@ -a,b +c,d @@" hunk starting at lines[start].
func parseHunk(lines []string, start int) (Hunk, int, error) {
	header, _ := trimCR(lines[start])
	h := Hunk{Header: header, Line: start + 1}
	var ok bool
	h.OldStart, h.OldLines, h.NewStart, h.NewLines, ok = parseHunkHeader(header)
	if !ok {
		return h, 0, lineErr(start+1, "bad hunk header %q: expected \"@@ -START[,COUNT] +START[,COUNT] @@\"", header)
	}
	oldSeen, newSeen := 0, 0
	i := start + 1
	// As git apply: a hunk takes exactly the lines its header counts. While
	// it expects lines, "--- x" is a removed line and "+++ x" an added one,
	// whatever they look like; a line that is none of ' ', '-', '+', an empty
	// line (an empty context line whose space was trimmed) or a "\ No
	// newline" marker, or the end of the patch, makes it corrupt.
	for ; oldSeen < h.OldLines || newSeen < h.NewLines; i++ {
		if i >= len(lines) {
			return h, 0, corrupt(i+1, "the patch ends, but hunk %q (line %d) expects %d more old and %d more new lines; fix the counts in the @@ header",
				header, start+1, h.OldLines-oldSeen, h.NewLines-newSeen)
		}
		l, _ := trimCR(lines[i])
		kind := byte(' ')
		if l != "" {
			kind = l[0]
		}
		switch kind {
		case ' ', '-', '+':
		case '\\':
			if err := markNoNewline(&h, i); err != nil {
				return h, 0, err
			}
			continue
		default:
			return h, 0, corrupt(i+1, "hunk %q (line %d) expects %d more old and %d more new lines, but %q does not start with ' ', '-' or '+'; fix the counts in the @@ header",
				header, start+1, h.OldLines-oldSeen, h.NewLines-newSeen, l)
		}
		if kind != '+' {
			oldSeen++
		}
		if kind != '-' {
			newSeen++
		}
		if oldSeen > h.OldLines || newSeen > h.NewLines {
			return h, 0, corrupt(i+1, "hunk %q (line %d) has more %s lines than its header counts (%d old, %d new); fix the counts in the @@ header",
				header, start+1, map[bool]string{true: "old", false: "new"}[oldSeen > h.OldLines], h.OldLines, h.NewLines)
		}
		text := ""
		if l != "" {
			text = l[1:]
		}
		h.Lines = append(h.Lines, Line{Kind: kind, Text: text})
	}
	for i < len(lines) && strings.HasPrefix(lines[i], `\`) {
		if err := markNoNewline(&h, i); err != nil {
			return h, 0, err
		}
		i++
	}
	if len(h.Lines) == 0 {
		return h, 0, lineErr(h.Line, "hunk %q has no lines", h.Header)
	}
	h.AtEOF = oldEndsWithoutNewline(h.Lines)
	return h, i, nil
}

// corrupt is git apply's error for a hunk whose lines do not match its
// header's counts.
func corrupt(line int, format string, args ...any) error {
	return fmt.Errorf("corrupt patch at line %d: %s", line, fmt.Sprintf(format, args...))
}

func markNoNewline(h *Hunk, i int) error {
	if len(h.Lines) == 0 {
		return lineErr(i+1, "\"\\ No newline at end of file\" must follow a line of the hunk")
	}
	h.Lines[len(h.Lines)-1].NoNewline = true
	return nil
}

func oldEndsWithoutNewline(ls []Line) bool {
	for k := len(ls) - 1; k >= 0; k-- {
		if ls[k].Kind != '+' {
			return ls[k].NoNewline
		}
	}
	return false
}

// parseHunkHeader reads "@@ -a[,b] +c[,d] @@ text".
func parseHunkHeader(s string) (os, ol, ns, nl int, ok bool) {
	rest, found := strings.CutPrefix(s, "@@ -")
	if !found {
		return
	}
	end := strings.Index(rest, " @@")
	if end < 0 {
		return
	}
	oldR, newR, found := strings.Cut(rest[:end], " +")
	if !found {
		return
	}
	var ok1, ok2 bool
	os, ol, ok1 = parseRange(oldR)
	ns, nl, ok2 = parseRange(strings.TrimSpace(newR))
	return os, ol, ns, nl, ok1 && ok2
}

func parseRange(s string) (start, count int, ok bool) {
	a, b, hasCount := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	count = 1
	if hasCount {
		if count, err = strconv.Atoi(b); err != nil || count < 0 {
			return 0, 0, false
		}
	}
	if count > 0 && start == 0 {
		return 0, 0, false
	}
	const limit = 1 << 30
	if start > limit || count > limit {
		return 0, 0, false
	}
	return start, count, true
}
