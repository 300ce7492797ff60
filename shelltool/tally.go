package shelltool

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onellm/onellm-mcp/fstools"
)

// emptyingTally adds up what the programs of one call have removed of the
// workspace root (review rev20d M2): `for f in *; do rm -rf "$f"; done`
// removes every entry one high-risk program at a time, which together is
// rm -r of the workspace. The root is listed once, at the call's first
// program (before anything of the command ran); a program whose removals, with
// those the call's earlier programs made, empty that listing (emptiesAll)
// is critical: killed unless approved in the call (which no line's request
// of another removal is: the option names the tally). An entry moved
// within the workspace is followed into the root entry it lands in (mv a
// a.x, mv * .t/: review rev20e M1), so removing that one removes it.
// A root entry whose own entries the call's programs removed (rm -rf
// a/*, one folder at a time) counts as removed too. Entries made later in
// the call are not counted. A root listing that fails is critical (fail
// closed). What it does not follow: a program that renames inside itself
// (python's os.rename), removals deeper down.
type emptyingTally struct {
	ws      string
	entries []string // the root's entries at the call's first program
	err     error
	listed  bool
	// holds maps a root entry's name now to the entries of the listing
	// it holds (itself, or what was moved into it); an entry of the
	// listing moved away holds nothing under its old name (away).
	holds   map[string][]string
	away    map[string]bool
	removed map[string]bool
	// inner tallies, per root entry, what the call removed of its own
	// entries (rm -rf a/*: review rev20e L3); an entry emptied so counts
	// as removed.
	inner map[string]*folderTally
}

// folderTally is the listing of one root entry, taken at the first
// removal in it, and what was removed of it since.
type folderTally struct {
	entries []string
	err     error
	removed map[string]bool
}

// childRemovals are the entries of root entries (a/x: {x, a}, as a move
// from x to a) that a removal's operands (from cwd) name.
func childRemovals(ops []string, cwd, ws string) []rootMove {
	var out []rootMove
	for _, op := range ops {
		p := resolveIn(cwd, op)
		if parent := filepath.Dir(p); filepath.Dir(parent) == ws && parent != ws {
			out = append(out, rootMove{from: filepath.Base(p), to: filepath.Base(parent)})
		}
	}
	return out
}

// emptied are the root entries that removing children (with what the
// tally holds) leaves with nothing of their listing.
func (t *emptyingTally) emptied(children []rootMove) []string {
	var out []string
	for _, c := range children {
		if slices.Contains(out, c.to) {
			continue
		}
		ft := t.folder(c.to)
		if ft.err != nil || len(ft.entries) == 0 {
			continue // (unlisted: what is there is not known to be removed)
		}
		all := map[string]bool{}
		for n := range ft.removed {
			all[n] = true
		}
		for _, o := range children {
			if o.to == c.to {
				all[o.from] = true
			}
		}
		if emptiesAll(ft.entries, all) {
			out = append(out, c.to)
		}
	}
	return out
}

// folder is the tally of the root entry name, listed the first time.
func (t *emptyingTally) folder(name string) *folderTally {
	if t.inner == nil {
		t.inner = map[string]*folderTally{}
	}
	ft, ok := t.inner[name]
	if !ok {
		ft = &folderTally{removed: map[string]bool{}}
		ft.entries, ft.err = fstools.EntryNames(filepath.Join(t.ws, name))
		t.inner[name] = ft
	}
	return ft
}

// rootMove is an entry of the workspace root (from) an mv moves to, or
// into, the root entry to.
type rootMove struct{ from, to string }

// list takes the root's listing, once.
func (t *emptyingTally) list() {
	if !t.listed {
		t.entries, t.err = fstools.EntryNames(t.ws)
		t.listed = true
	}
}

// held are the entries of the listing the root entry name holds now.
func (t *emptyingTally) held(name string) []string {
	if h, ok := t.holds[name]; ok {
		return h
	}
	if !t.away[name] && slices.Contains(t.entries, name) {
		return []string{name}
	}
	return nil
}

// empties is why removing names (root entries), after what the tally
// holds, empties the workspace root ("" when it does not, or when names
// do so by themselves: raiseEmptying decided that removal as such).
func (t *emptyingTally) empties(names []string, children []rootMove) string {
	if t.err != nil {
		return "rm -r in the workspace root (unlisted: " + t.err.Error() + ")"
	}
	all := map[string]bool{}
	for n := range t.removed {
		all[n] = true
	}
	earlier := len(all) > 0 || len(t.away) > 0
	for _, n := range slices.Concat(names, t.emptied(children)) {
		for _, e := range t.held(n) {
			all[e] = true
		}
	}
	if !earlier || len(all) < 2 || !emptiesAll(t.entries, all) {
		return ""
	}
	return "rm -r of every entry of the workspace, one program at a time in this call"
}

// add counts what a program let run removed and moved.
func (t *emptyingTally) add(names []string, moves, children []rootMove) {
	if t.removed == nil {
		t.removed, t.holds, t.away = map[string]bool{}, map[string][]string{}, map[string]bool{}
	}
	names = slices.Concat(names, t.emptied(children))
	for _, c := range children {
		t.folder(c.to).removed[c.from] = true
	}
	for _, n := range names {
		for _, e := range t.held(n) {
			t.removed[e] = true
		}
		t.holds[n] = nil
	}
	for _, m := range moves {
		moved := t.held(m.from)
		t.holds[m.from], t.away[m.from] = nil, true
		t.holds[m.to] = append(slices.Clip(t.held(m.to)), moved...)
	}
}

// rootMoves are the entries of the workspace root ws that mv's words
// (run from cwd) move within the workspace, each with the root entry it
// lands in: its destination (mv a b), or the folder it goes into (mv a
// dir/, mv -t dir a, -tdir, --target=dir: GNU's clustered short options
// and unique prefixes of long ones). lost are the root entries among its
// operands when its options cannot be read (one mv does not have, an
// ambiguous prefix): they are taken as removed (fail closed). A
// destination outside the workspace adds nothing (the analyzer's
// removal).
func rootMoves(words []string, cwd, ws string) (moves []rootMove, lost []string) {
	o, ok := parseMv(words)
	var srcs []string
	if ok && o.target == "" {
		if len(o.ops) < 2 {
			return nil, nil
		}
		o.target, srcs = o.ops[len(o.ops)-1], o.ops[:len(o.ops)-1]
		o.into = !o.noTarget && (len(srcs) > 1 || strings.HasSuffix(o.target, "/") || isFolder(resolveIn(cwd, o.target)))
	} else if ok {
		srcs = o.ops
	} else {
		for _, w := range words[1:] { // any word may be an operand
			if !strings.HasPrefix(w, "-") {
				srcs = append(srcs, w)
			}
		}
	}
	dest := resolveIn(cwd, o.target)
	for _, op := range srcs {
		src := resolveIn(cwd, op)
		if filepath.Dir(src) != ws {
			continue
		}
		if !ok {
			lost = append(lost, filepath.Base(src))
			continue
		}
		landed := landing(dest, o.into)
		if landed == "" {
			lost = append(lost, filepath.Base(src)) // where it goes is not known: removed
			continue
		}
		if o.into {
			landed = filepath.Join(landed, filepath.Base(src))
		}
		if to, in := rootEntryOf(landed, ws); in {
			moves = append(moves, rootMove{from: filepath.Base(src), to: to})
		} else {
			lost = append(lost, filepath.Base(src)) // out of the workspace, through a link (review rev20g F5)
		}
	}
	return moves, lost
}

// mvOptions is what mv's options say.
type mvOptions struct {
	ops            []string
	target         string
	into, noTarget bool
}

// mvLong are GNU mv's long options; those taking a value end in "=" (a
// value of its own word when no "=" is given), those with an optional
// one in "=?".
var mvLong = []string{"backup=?", "context", "debug", "exchange", "force", "interactive", "no-clobber", "no-copy",
	"no-target-directory", "strip-trailing-slashes", "suffix=", "target-directory=", "update=?", "verbose", "help", "version"}

// parseMv reads mv's argv as GNU mv does; ok is false for an option it
// does not have (or an ambiguous prefix, or a value missing).
func parseMv(words []string) (o mvOptions, ok bool) {
	opts := true
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case !opts || w == "-" || len(w) < 2 || w[0] != '-':
			o.ops = append(o.ops, w)
		case w == "--":
			opts = false
		case strings.HasPrefix(w, "--"):
			name, val, hasVal := strings.Cut(w[2:], "=")
			var match []string
			for _, l := range mvLong {
				if strings.HasPrefix(strings.TrimRight(l, "=?"), name) {
					match = append(match, l)
				}
			}
			if len(match) != 1 {
				return o, false
			}
			long := match[0]
			if strings.HasSuffix(long, "=") && !hasVal {
				if i+1 >= len(words) {
					return o, false
				}
				i++
				val = words[i]
			}
			switch strings.TrimRight(long, "=?") {
			case "target-directory":
				o.target, o.into = val, true
			case "no-target-directory":
				o.noTarget = true
			}
		default:
			for j := 1; j < len(w); j++ {
				switch c := w[j]; {
				case c == 't' || c == 'S':
					val := w[j+1:]
					if val == "" {
						if i+1 >= len(words) {
							return o, false
						}
						i++
						val = words[i]
					}
					if c == 't' {
						o.target, o.into = val, true
					}
					j = len(w)
				case c == 'T':
					o.noTarget = true
				case strings.IndexByte("bfinuvZ", c) >= 0:
				default:
					return o, false
				}
			}
		}
	}
	return o, true
}

// landing is the real path mv's destination dest names (a folder to move
// into, when into; else the new name, in its real folder), with the
// symlinks on its way resolved as the kernel resolves them now: a link
// in the workspace may lead out of it (ln -s /tmp/x l; mv a l/). "" when
// it cannot be resolved (a link into the sandbox's private /tmp, which
// the server cannot see).
func landing(dest string, into bool) string {
	if into {
		return realDir(dest)
	}
	dir := realDir(filepath.Dir(dest))
	if dir == "" {
		return ""
	}
	if fi, err := os.Lstat(dest); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return realDir(dest) // mv a l: into where the link leads, when a folder
	}
	return filepath.Join(dir, filepath.Base(dest))
}

// rootEntryOf is the entry of the root ws the path p lies in (or is).
func rootEntryOf(p, ws string) (string, bool) {
	rel, ok := strings.CutPrefix(p, ws+"/")
	if !ok || rel == "" {
		return "", false
	}
	first, _, _ := strings.Cut(rel, "/")
	return first, true
}

// isFolder reports whether p is a folder now (through symlinks, as mv
// takes its destination).
func isFolder(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
