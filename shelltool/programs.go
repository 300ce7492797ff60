package shelltool

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
)

// The exec gate's program identities. A name is only a name where the
// command can write: `cp /usr/bin/curl /tmp/x` makes a curl called x. So
// the programs that matter by name (those a deny or ask rule can name,
// those the line analysis has rules for, git, and the dynamic loaders) are
// found on the host once per policy and PATH: their files' device and
// inode, size, GNU build-id and (computed the first time a written
// executable of the same size needs it) SHA-256. At exec time a program
// whose file is one of them is that program, whatever it is called; a
// program the command may have written (sandbox.ExecEvent.Written) is also
// that program when its build-id or its content is the same. A changed
// copy (one byte patched into its build-id, a program the command builds
// itself) is not recognised: the gate cannot tell what a program does; the
// sandbox bounds it.

// binDirs are searched beside the sandbox's PATH.
func binDirs() []string {
	return []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}
}

// loaderGlobs find the dynamic loaders (with the PT_INTERP of every
// program found).
func loaderGlobs() []string {
	return []string{"/lib*/ld-*.so*", "/usr/lib*/ld-*.so*", "/lib*/*-linux-*/ld-*.so*", "/usr/lib*/*-linux-*/ld-*.so*"}
}

type fileID struct{ dev, ino uint64 }

// hostProgram is one file on the host and the names it goes by.
type hostProgram struct {
	sandbox.ProgramFile
	names  []string
	loader bool

	once   sync.Once
	sum    string
	sumErr error
}

// sha256 hashes the file once (it must still be the one found).
func (h *hostProgram) sha256() (string, error) {
	h.once.Do(func() { h.sum, h.sumErr = h.SHA256() })
	return h.sum, h.sumErr
}

// programTable is what the gate knows of the host's programs that matter
// by name. It is read by concurrent calls; only the lazily computed sums
// change, each once.
type programTable struct {
	byFile    map[fileID]*hostProgram
	byBuildID map[string][]*hostProgram
	bySize    map[int64][]*hostProgram
	// broken are programs found that could not be read: a written
	// program cannot be told from them, so it is refused.
	broken []string
}

// identity is what the table says of one exec.
type identity struct {
	names   []string // the programs it is, by their names
	loader  bool     // it is a dynamic loader (a copy or link of one)
	problem string   // it cannot be verified
}

// buildProgramTable finds, in dirs (then binDirs), every file whose name
// matters (named) and the dynamic loaders.
func buildProgramTable(dirs []string, named func(string) bool) *programTable {
	t := &programTable{byFile: map[fileID]*hostProgram{}, byBuildID: map[string][]*hostProgram{}, bySize: map[int64][]*hostProgram{}}
	interps := map[string]bool{}
	seen := map[string]bool{}
	for _, d := range slices.Concat(dirs, binDirs()) {
		if !filepath.IsAbs(d) || seen[d] {
			continue
		}
		seen[d] = true
		entries, err := os.ReadDir(d)
		if err != nil {
			if !unseen(err) {
				t.broken = append(t.broken, d)
			}
			continue
		}
		for _, e := range entries {
			if named(e.Name()) {
				if interp := t.add(filepath.Join(d, e.Name()), e.Name(), false); interp != "" {
					interps[interp] = true
				}
			}
		}
	}
	loaders := slices.Sorted(maps.Keys(interps))
	for _, g := range loaderGlobs() {
		m, _ := filepath.Glob(g) // the patterns are valid
		loaders = append(loaders, m...)
	}
	if interp := t.add("/bin/sh", "sh", false); interp != "" {
		loaders = append(loaders, interp)
	}
	for _, l := range loaders {
		t.add(l, filepath.Base(l), true)
	}
	return t
}

// unseen reports whether err means there is no file the command could
// copy: none there, or none the server can read (the command runs as the
// server's user with fewer rights, so it cannot read it either).
func unseen(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) ||
		errors.Is(err, fs.ErrPermission)
}

// add records the program at path under name and returns its ELF
// interpreter. A path that leads nowhere, or to no file the command could
// read, or to no executable file, is skipped; one that fails otherwise is
// broken.
func (t *programTable) add(path, name string, loader bool) string {
	pf, err := sandbox.ReadProgramFile(path)
	if err != nil {
		if !unseen(err) {
			t.broken = append(t.broken, path)
		}
		return ""
	}
	if !pf.Exec {
		return ""
	}
	id := fileID{pf.Dev, pf.Ino}
	h := t.byFile[id]
	if h == nil {
		h = &hostProgram{ProgramFile: pf}
		t.byFile[id] = h
		t.bySize[h.Size] = append(t.bySize[h.Size], h)
		for _, b := range buildIDKeys(h.ELF.BuildID, h.ELF.GoBuildID) {
			t.byBuildID[b] = append(t.byBuildID[b], h)
		}
	}
	h.loader = h.loader || loader
	if !slices.Contains(h.names, name) {
		h.names = append(h.names, name)
	}
	return h.ELF.Interp
}

// sizes are the sizes a written executable is hashed at.
func (t *programTable) sizes() []int64 {
	if t == nil {
		return nil
	}
	out := make([]int64, 0, len(t.bySize))
	for n := range t.bySize {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// identify says which of the table's programs ev is: by file for every
// exec, and for a written executable by build-id and content too.
func (t *programTable) identify(ev sandbox.ExecEvent) identity {
	var id identity
	if t == nil {
		id.problem = "no table of host programs to identify it by"
		return id
	}
	add := func(h *hostProgram) {
		for _, n := range h.names {
			if !slices.Contains(id.names, n) {
				id.names = append(id.names, n)
			}
		}
		id.loader = id.loader || h.loader
	}
	if h := t.byFile[fileID{ev.Dev, ev.Ino}]; h != nil {
		add(h)
	}
	if !ev.WrittenExe {
		return id
	}
	if h := t.byFile[fileID{ev.InterpDev, ev.InterpIno}]; h != nil && ev.InterpIno != 0 && !h.loader {
		// A named program loaded as a written program's interpreter runs
		// as itself (a loader there is the normal case).
		add(h)
	}
	if len(t.broken) > 0 {
		id.problem = "written executable cannot be told from host programs that could not be read (" + strings.Join(t.broken[:min(3, len(t.broken))], ", ") + ")"
		return id
	}
	for _, b := range buildIDKeys(ev.BuildID, ev.GoBuildID) {
		for _, h := range t.byBuildID[b] {
			add(h)
		}
	}
	if cands := t.bySize[ev.Size]; len(cands) > 0 {
		if ev.SHA256 == "" {
			id.problem = "written executable of " + strconv.FormatInt(ev.Size, 10) + " bytes was not hashed"
			return id
		}
		for _, h := range cands {
			sum, err := h.sha256()
			if err != nil {
				id.problem = "cannot compare the written executable with " + h.Path + ": " + err.Error()
				return id
			}
			if sum == ev.SHA256 {
				add(h)
			}
		}
	}
	return id
}

// buildIDKeys are the byBuildID keys of a file's GNU and Go build IDs.
func buildIDKeys(gnu, goID string) []string {
	var k []string
	if gnu != "" {
		k = append(k, gnu)
	}
	if goID != "" {
		k = append(k, "go:"+goID)
	}
	return k
}

// programCache keeps the table of the policies and PATHs in use.
type programCache struct {
	mu     sync.Mutex
	tables map[string]cachedTable
	// loaders is loaderDirs' last answer (listing /usr/lib and /lib was
	// most of a command's server-side CPU).
	loaders loaderDirCache
}

// cachedTable holds its policy, so the policy's address in the key is
// never another's.
type cachedTable struct {
	p *grants.Policy
	t *programTable
}

// maxProgramTables bounds the cache (a new policy per reload).
const maxProgramTables = 8

// table returns the program table for p and the sandbox's PATH, built on
// first use and again when a folder it searched (PATH's, binDirs, the
// loaders') has changed (its identity or change time). Two changes within
// one tick of the file system's clock, the table built between them, are
// not told apart.
func (c *programCache) table(p *grants.Policy, path string) *programTable {
	dirs := filepath.SplitList(path)
	// Each folder by identity and change time (a modification time can be
	// set back to what it was).
	stats, _ := folderStats(slices.Concat(dirs, binDirs(), c.loaders.dirs()))
	key := fmt.Sprintf("%p", p) + "\x00" + stats
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.tables[key]; ok && e.p == p {
		return e.t
	}
	named := func(n string) bool {
		return n == "git" || cmdline.KnownProgram(n) || p.NamesProgram(n) ||
			slices.ContainsFunc(cmdline.ProgramFamilies(n), p.NamesProgram)
	}
	t := buildProgramTable(dirs, named)
	if c.tables == nil || len(c.tables) >= maxProgramTables {
		c.tables = map[string]cachedTable{}
	}
	c.tables[key] = cachedTable{p, t}
	return t
}

// loaderDirCache remembers loaderDirs. The answer depends only on the
// listings of the folders its globs read: "/" and "/usr" (for lib*) and
// each lib* folder found there (for *-linux-*). So those folders are
// stat'ed instead of listed, and listed again when one of them is not the
// same folder with the same change time (an entry added, removed or
// renamed changes it, and no one can set it back, unlike the modification
// time) or the set of lib* folders found changed. Their stats are taken
// before the listing, so a change during it shows at the next call; a
// listing made within settle of a folder's change is not kept (two changes
// within one tick of the file system's clock share a time), so a folder
// that just changed is listed again.
type loaderDirCache struct {
	mu     sync.Mutex
	settle time.Duration // 0: a second
	key    string        // the stats of listed, "" when nothing is kept
	listed []string      // "/", "/usr" and the lib* folders found
	out    []string
}

// loaderListedRoots are the folders loaderGlobs' first wildcard (lib*)
// lists.
func loaderListedRoots() []string { return []string{"/", "/usr"} }

// dirs is loaderDirs, from the cache while the folders it lists are
// unchanged.
func (c *loaderDirCache) dirs() []string { return c.dirsFor(loaderListedRoots(), loaderGlobs()) }

// dirsFor is dirs for globs whose folder parts are root/lib*/… for one of
// roots.
func (c *loaderDirCache) dirsFor(roots, globs []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key != "" {
		if key, _ := folderStats(c.listed); key == c.key {
			return c.out
		}
	}
	// The lib* folders beneath the roots, by their own listing; stat'ed
	// before loaderDirs lists them again.
	listed := slices.Clone(roots)
	for _, r := range roots {
		m, _ := filepath.Glob(filepath.Join(r, "lib*"))
		listed = append(listed, m...)
	}
	key, newest := folderStats(listed)
	c.out = loaderDirs(globs)
	c.listed, c.key = listed, key
	settle := c.settle
	if settle == 0 {
		settle = time.Second
	}
	if time.Since(newest) < settle {
		c.key = "" // too fresh to trust its time: list again next time
	}
	return c.out
}

// folderStats is a key of the identity and change time of each of dirs
// (or of its absence), and the newest of those times.
func folderStats(dirs []string) (key string, newest time.Time) {
	var b strings.Builder
	for _, d := range dirs {
		b.WriteString(d)
		var st syscall.Stat_t
		if syscall.Stat(d, &st) != nil {
			b.WriteString("\x00-\x00")
			continue
		}
		ct := time.Unix(st.Ctim.Unix())
		if ct.After(newest) {
			newest = ct
		}
		fmt.Fprintf(&b, "\x00%d:%d:%d\x00", st.Dev, st.Ino, ct.UnixNano())
	}
	return b.String(), newest
}

// loaderDirs are the folders globs (loaderGlobs) search in.
func loaderDirs(globs []string) []string {
	var out []string
	for _, g := range globs {
		m, _ := filepath.Glob(filepath.Dir(g)) // the patterns are valid
		out = append(out, m...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
