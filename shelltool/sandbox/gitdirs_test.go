//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gitEnv keeps the host's and the user's git settings out of the tests.
var gitEnv = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
	"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_ALLOW_PROTOCOL=file", "PATH=/usr/bin:/bin", "LC_ALL=C"}

func hostGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv, "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitTree makes a workspace holding a repository with a commit, a nested
// repository, a submodule (.git/modules/sub, sub/.git a file) and a linked
// worktree (.git/worktrees/wt, wt/.git a file).
func gitTree(t testing.TB) (ws string, repos []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		missingDep(t, "git not installed: %v", err)
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws = filepath.Join(base, "ws")
	subsrc := filepath.Join(base, "subsrc")
	for _, d := range []string{ws, subsrc, filepath.Join(ws, "nested")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		hostGit(t, d, "init", "-q", "-b", "main")
		os.WriteFile(filepath.Join(d, "a.txt"), []byte("a\n"), 0o644)
		hostGit(t, d, "add", "a.txt")
		hostGit(t, d, "commit", "-qm", "first")
	}
	hostGit(t, ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", subsrc, "sub")
	hostGit(t, ws, "commit", "-qm", "sub")
	hostGit(t, ws, "worktree", "add", "-q", "-b", "side", "wt")
	// A git directory without hooks/: one the command would create.
	os.RemoveAll(filepath.Join(ws, "nested", ".git", "hooks"))
	return ws, []string{ws, filepath.Join(ws, "nested"), filepath.Join(ws, "sub"), filepath.Join(ws, "wt")}
}

func TestFindGitDirs(t *testing.T) {
	ws, _ := gitTree(t)
	// A symlinked .git: its target is found.
	if err := os.MkdirAll(filepath.Join(ws, "linked", "store"), 0o755); err != nil {
		t.Fatal(err)
	}
	hostGit(t, filepath.Join(ws, "linked", "store"), "init", "-q", "--bare")
	if err := os.Symlink("store", filepath.Join(ws, "linked", ".git")); err != nil {
		t.Fatal(err)
	}
	got := FindGitDirs([]string{ws}, nil)
	want := []string{ws + "/.git", ws + "/.git/modules/sub", ws + "/.git/worktrees/wt", ws + "/linked/store", ws + "/nested/.git"}
	if !slices.Equal(got.Dirs, want) {
		t.Errorf("Dirs = %q, want %q", got.Dirs, want)
	}
	slices.Sort(got.Links)
	if wantL := []string{ws + "/sub/.git", ws + "/wt/.git"}; !slices.Equal(got.Links, wantL) {
		t.Errorf("Links = %q, want %q", got.Links, wantL)
	}
}

// TestFindGitDirsIgnoresPlantedLinks: a repository a command made can hold
// a symlink named worktrees (or modules) pointing at any folder the sandbox
// sees; none of what lies there is taken for a git directory, because the
// server writes into git directories after the command.
func TestFindGitDirsIgnoresPlantedLinks(t *testing.T) {
	root := t.TempDir()
	ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	for _, d := range []string{ws + "/sub/.git", outside + "/target/.git", outside + "/mods/m"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(outside+"/mods/m/HEAD", []byte("ref: refs/heads/main\n"), 0o644)
	os.Symlink(outside+"/target", ws+"/sub/.git/worktrees")
	os.Symlink(outside+"/mods", ws+"/sub/.git/modules")
	got := FindGitDirs([]string{ws}, nil)
	if want := []string{ws + "/sub/.git"}; !slices.Equal(got.Dirs, want) {
		t.Fatalf("Dirs = %q, want %q (nothing through the planted links)", got.Dirs, want)
	}
}

// TestGitMetadataSurvives: a command tries every way to make git run code
// on the host later — config, hooks (also where none existed), commondir,
// a worktree's gitdir, a submodule's .git file — in the workspace's, a
// nested repository's, a submodule's and a worktree's git directory; then
// commits in each. Checked from the host: nothing of the first kind was
// kept, every commit was.
func TestGitMetadataSurvives(t *testing.T) {
	needSandbox(t)
	ws, repos := gitTree(t)
	gl := FindGitDirs([]string{ws}, nil)
	readHooks := func(g string) []string {
		ents, _ := os.ReadDir(filepath.Join(g, "hooks"))
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}
	before := map[string][]string{}
	for _, g := range gl.Dirs {
		before[g] = readHooks(g)
	}
	wtGitdir, _ := os.ReadFile(filepath.Join(ws, ".git/worktrees/wt/gitdir"))
	subLink, _ := os.ReadFile(filepath.Join(ws, "sub/.git"))

	attack := `
mkdir -p evil/hooks && printf '[core]\n\tfsmonitor = touch PWNED\n' > evil/config
printf '#!/bin/sh\ntouch PWNED\n' > evil/hooks/post-commit; chmod +x evil/hooks/post-commit
for g in .git nested/.git .git/modules/sub .git/worktrees/wt; do
  git --git-dir=$g config core.fsmonitor 'touch PWNED' && echo "config of $g changed"
  printf '[core]\n\tfsmonitor = touch PWNED\n' >> $g/config && echo "config of $g appended"
  mkdir -p $g/hooks; printf '#!/bin/sh\ntouch PWNED\n' > $g/hooks/post-commit && echo "hook in $g"
  echo "$PWD/evil" > $g/commondir && echo "commondir of $g written"
  mkdir -p $g/info && echo '* filter=x' > $g/info/attributes
  echo x > $g/brand-new
done
echo "$PWD/evil" > .git/worktrees/wt/gitdir
echo "gitdir: $PWD/evil" > sub/.git && echo "sub/.git rewritten"
echo "gitdir: $PWD/evil" > wt/.git && echo "wt/.git rewritten"
mv .git/hooks .git/hooks-old; rm -rf .git/hooks
for r in nested sub wt; do mv $r $r-moved && echo "$r moved"; mv $r/.git $r/git-moved && echo "$r/.git moved"; done
true`
	commit := `
set -e
for r in . nested sub wt; do
  (cd $r && echo "$r" > b.txt && git add b.txt && git commit -qm "in sandbox" && git log -1 --format=%s)
done`
	for _, cmd := range []string{attack, commit} {
		s := Spec{Command: cmd, Dir: ws, Env: append(gitEnv, "HOME="+ws), Writable: []string{ws},
			GitDirs: gl.Dirs, ReadOnly: gl.Links, Timeout: 20 * time.Second}
		r, err := Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s\ndropped: %q", r.ExitCode, r.Stdout, r.Stderr, r.GitDropped)
		if cmd == commit && (r.ExitCode != 0 || strings.Count(r.Stdout, "in sandbox") != 4) {
			t.Errorf("git commit in the sandbox failed: exit %d\n%s%s", r.ExitCode, r.Stdout, r.Stderr)
		}
		if cmd == attack && len(r.GitDropped) == 0 {
			t.Errorf("the attack's writes were not reported as dropped")
		}
	}
	for _, r := range repos {
		cmd := exec.Command("git", "config", "--get", "core.fsmonitor")
		cmd.Dir, cmd.Env = r, append(gitEnv, "HOME="+r)
		if out, err := cmd.CombinedOutput(); err == nil || len(out) > 0 {
			t.Errorf("%s: core.fsmonitor is %q after the command", r, out)
		}
		if got := hostGit(t, r, "log", "-1", "--format=%s"); got != "in sandbox" {
			t.Errorf("%s: last commit %q, want the sandbox's", r, got)
		}
		if st := hostGit(t, r, "status", "--porcelain", "--untracked-files=no"); st != "" && r != ws {
			t.Errorf("%s: status after the commit: %q (index not kept?)", r, st)
		}
	}
	for _, g := range gl.Dirs {
		if h := readHooks(g); !slices.Equal(h, before[g]) {
			t.Errorf("%s/hooks changed: %q, was %q", g, h, before[g])
		}
		for _, f := range []string{"commondir", "brand-new", "info/attributes"} {
			if _, err := os.Stat(filepath.Join(g, f)); err == nil && !(f == "commondir" && strings.Contains(g, "worktrees")) {
				t.Errorf("%s/%s exists after the command", g, f)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git/worktrees/wt/gitdir")); string(b) != string(wtGitdir) {
		t.Errorf("worktree gitdir changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "sub/.git")); string(b) != string(subLink) {
		t.Errorf("sub/.git changed: %q", b)
	}
	for _, r := range []string{"nested", "sub", "wt"} {
		if _, err := os.Stat(filepath.Join(ws, r+"-moved")); err == nil {
			t.Errorf("%s was moved aside (a repository of the command's could take its place)", r)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "PWNED")); err == nil {
		t.Errorf("git ran the planted code")
	}
}

// BenchmarkRunGitDirs: a sandboxed `true` in a workspace with four git
// directories (overlays, binds, and the merge after), against the same
// without GitDirs. cpu-ms is the processor time per run of the server and
// everything it reaped (the helper and the shell), which load distorts far
// less than the wall time.
func BenchmarkRunGitDirs(b *testing.B) {
	needSandbox(b)
	ws, _ := gitTree(b)
	gl := FindGitDirs([]string{ws}, nil)
	for _, tc := range []struct {
		name string
		dirs []string
	}{{"none", nil}, {"four", gl.Dirs}} {
		b.Run(tc.name, func(b *testing.B) {
			s := Spec{Command: "true", Dir: ws, Writable: []string{ws}, GitDirs: tc.dirs, ReadOnly: gl.Links, Timeout: 10 * time.Second}
			cpu0 := cpuSelfAndChildren()
			benchMedian(b, func() error { _, err := Run(context.Background(), s); return err })
			b.ReportMetric(float64((cpuSelfAndChildren()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuSelfAndChildren is the user and system time of this process and of
// its reaped children.
func cpuSelfAndChildren() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

// BenchmarkFindGitDirs walks this repository, as each command's start does
// for its writable roots.
func BenchmarkFindGitDirs(b *testing.B) {
	root, _ := filepath.Abs("../..")
	for b.Loop() {
		FindGitDirs([]string{root}, nil)
	}
}

// mountInfo is one line of /proc/self/mountinfo: the mount point (octal
// escapes as the kernel writes them), its per-mount options and the file
// system type.
type mountInfo struct {
	point  string
	opts   map[string]bool
	fstype string
}

func parseMountInfo(t *testing.T, text string) map[string]mountInfo {
	t.Helper()
	out := map[string]mountInfo{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if len(f) < 6 || sep < 6 || sep+1 >= len(f) {
			t.Fatalf("mountinfo line %q", line)
		}
		mi := mountInfo{point: f[4], opts: map[string]bool{}, fstype: f[sep+1]}
		for _, o := range strings.Split(f[5], ",") {
			mi.opts[o] = true
		}
		out[mi.point] = mi // the last mount on a point is the one seen
	}
	return out
}

// TestGitMountFlags reads, inside the sandbox, the mounts that guard the
// git directories: each git directory is an overlay, nosuid and nodev; its
// record folders are bound back writable, nosuid and nodev; its config,
// hooks and info are bound back read-only, nosuid and nodev; the writable
// root is nosuid and nodev; the stage is mounted nowhere the command sees
// and the helper's descriptors stay out of reach. From the host: no stage
// folder is made in the temporary folder.
func TestGitMountFlags(t *testing.T) {
	needSandbox(t)
	ws, _ := gitTree(t)
	gl := FindGitDirs([]string{ws}, nil)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := Spec{Command: `cat /proc/self/mountinfo; for f in /proc/1/fd/*; do ls "$f/" >/dev/null 2>&1 && echo "HELPER-FD $f"; done; exit 0`,
		Dir: ws, Env: append(gitEnv, "HOME="+ws), Writable: []string{ws}, GitDirs: gl.Dirs, ReadOnly: gl.Links, Timeout: 20 * time.Second}
	r, err := Run(context.Background(), s)
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("run: %v, exit %d, stderr %q", err, r.ExitCode, r.Stderr)
	}
	if strings.Contains(r.Stdout, "HELPER-FD") {
		t.Errorf("the command reached a helper's descriptor:\n%s", r.Stdout)
	}
	mi := parseMountInfo(t, r.Stdout)
	check := func(p, fstype string, want ...string) {
		t.Helper()
		m, ok := mi[p]
		if !ok {
			t.Errorf("%s is not a mount point in the sandbox", p)
			return
		}
		if fstype != "" && m.fstype != fstype {
			t.Errorf("%s is %s, want %s", p, m.fstype, fstype)
		}
		for _, o := range want {
			if !m.opts[o] {
				t.Errorf("%s mounted %v, want %s", p, m.opts, o)
			}
		}
	}
	check(ws, "", "rw", "nosuid", "nodev")
	for _, g := range gl.Dirs {
		check(g, "overlay", "rw", "nosuid", "nodev")
		for _, name := range []string{"objects", "refs", "logs"} {
			if _, err := os.Lstat(filepath.Join(g, name)); err == nil {
				check(filepath.Join(g, name), "", "rw", "nosuid", "nodev")
			}
		}
		for _, name := range []string{"config", "hooks", "info"} {
			if _, err := os.Lstat(filepath.Join(g, name)); err == nil {
				check(filepath.Join(g, name), "", "ro", "nosuid", "nodev")
			}
		}
	}
	for _, l := range gl.Links {
		check(l, "", "ro", "nosuid")
	}
	for p, m := range mi {
		if m.fstype == "tmpfs" && isBeneath(p, ws) {
			t.Errorf("a tmpfs is mounted at %s inside the workspace", p)
		}
		if isBeneath(p, ws) && (!m.opts["nosuid"] || !m.opts["nodev"]) {
			t.Errorf("%s inside the writable root is mounted %v", p, m.opts)
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("the run left %d entries in the temporary folder", len(ents))
	}
}

// TestReadOnlyFolderHoldsGitDir: a folder closed to writes (Spec.ReadOnly,
// as a deny rule makes one) that holds a git directory is closed as a
// whole, the git directory's overlay and its writable record folders
// beneath it included: every mount beneath it is read-only, and nothing the
// command tries lands in the repository.
func TestReadOnlyFolderHoldsGitDir(t *testing.T) {
	needSandbox(t)
	ws, _ := gitTree(t)
	gl := FindGitDirs([]string{ws}, nil)
	nested := filepath.Join(ws, "nested")
	head, _ := os.ReadFile(filepath.Join(nested, ".git/HEAD"))
	cmd := `echo x > nested/.git/objects/probe && echo OBJECTS-WRITTEN; echo x > nested/.git/HEAD && echo HEAD-WRITTEN
echo x > nested/new && echo FILE-WRITTEN; cat /proc/self/mountinfo; exit 0`
	s := Spec{Command: cmd, Dir: ws, Env: append(gitEnv, "HOME="+ws), Writable: []string{ws}, GitDirs: gl.Dirs,
		ReadOnly: append(slices.Clone(gl.Links), nested), Timeout: 20 * time.Second}
	r, err := Run(context.Background(), s)
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("run: %v, exit %d, stderr %q", err, r.ExitCode, r.Stderr)
	}
	for _, w := range []string{"OBJECTS-WRITTEN", "HEAD-WRITTEN", "FILE-WRITTEN"} {
		if strings.Contains(r.Stdout, w) {
			t.Errorf("%s inside the read-only folder", w)
		}
	}
	mounts := 0
	var info []string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if !strings.Contains(l, "-WRITTEN") {
			info = append(info, l)
		}
	}
	for p, m := range parseMountInfo(t, strings.Join(info, "\n")) {
		if isBeneath(p, nested) {
			mounts++
			if !m.opts["ro"] {
				t.Errorf("%s beneath the read-only folder is mounted %v", p, m.opts)
			}
		}
	}
	if mounts < 3 {
		t.Errorf("only %d mounts beneath %s: the git guard's are missing", mounts, nested)
	}
	if _, err := os.Stat(filepath.Join(nested, ".git/objects/probe")); err == nil {
		t.Errorf("the object write reached the repository")
	}
	if b, _ := os.ReadFile(filepath.Join(nested, ".git/HEAD")); string(b) != string(head) {
		t.Errorf("HEAD changed to %q", b)
	}
}

// What the merge writes back to the host is bounded by what the stage
// holds: the copy runs after the command, beyond its limits, so a sparse
// record file (its length in zeros on the host) and record files past the
// bound on their number are dropped, while an honest one is kept.
func TestGitMergeBounded(t *testing.T) {
	needSandbox(t)
	ws, _ := gitTree(t)
	gl := FindGitDirs([]string{ws}, nil)
	cmd := `
truncate -s 200M .git/SPARSE_HEAD
echo kept > .git/COMMIT_EDITMSG
i=0; while [ $i -lt 300 ]; do : > .git/B${i}_HEAD; i=$((i+1)); done`
	s := Spec{Command: cmd, Dir: ws, Env: append(gitEnv, "HOME="+ws), Writable: []string{ws},
		GitDirs: gl.Dirs, ReadOnly: gl.Links, Timeout: 20 * time.Second, TmpSize: 1 << 20}
	r, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	g := filepath.Join(ws, ".git")
	if _, err := os.Stat(filepath.Join(g, "SPARSE_HEAD")); err == nil {
		t.Error("a sparse record file was written out to the host")
	}
	// B*_HEAD sort before COMMIT_EDITMSG: the flood cannot push a
	// commit's own records out.
	if b, err := os.ReadFile(filepath.Join(g, "COMMIT_EDITMSG")); err != nil || string(b) != "kept\n" {
		t.Errorf("an honest record file was not kept: %q %v", b, err)
	}
	kept := 0
	for i := range 300 {
		if _, err := os.Stat(filepath.Join(g, fmt.Sprintf("B%d_HEAD", i))); err == nil {
			kept++
		}
	}
	if kept >= 300 || kept == 0 {
		t.Errorf("%d of 300 record files kept, want some but at most the bound", kept)
	}
	if !slices.ContainsFunc(r.GitDropped, func(d string) bool { return strings.Contains(d, "sparse") }) {
		t.Errorf("the sparse file is not listed as dropped: %q", r.GitDropped)
	}
}

// A record file the command deletes (git removing MERGE_HEAD or ORIG_HEAD)
// is an overlay whiteout in the stage, and its deletion is kept.
func TestGitRecordDeletionKept(t *testing.T) {
	needSandbox(t)
	ws, _ := gitTree(t)
	gl := FindGitDirs([]string{ws}, nil)
	orig := filepath.Join(ws, ".git", "ORIG_HEAD")
	if err := os.WriteFile(orig, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Spec{Command: "rm .git/ORIG_HEAD", Dir: ws, Env: append(gitEnv, "HOME="+ws), Writable: []string{ws},
		GitDirs: gl.Dirs, ReadOnly: gl.Links, Timeout: 20 * time.Second}
	r, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, r.Stderr)
	}
	if _, err := os.Stat(orig); !os.IsNotExist(err) {
		t.Errorf("the deleted ORIG_HEAD is still there (%v); dropped: %q", err, r.GitDropped)
	}
}

// TestGitAlternatesDropped: a command that writes objects/info/alternates
// or http-alternates (git would read objects from the folder they name) in
// a git directory, a nested one, a submodule's, and one whose objects/info
// was missing, leaves none of them on the host (each is reported dropped),
// while its commits are kept.
func TestGitAlternatesDropped(t *testing.T) {
	needSandbox(t)
	ws, _ := gitTree(t)
	os.RemoveAll(filepath.Join(ws, "nested", ".git", "objects", "info"))
	gl := FindGitDirs([]string{ws}, nil)
	cmd := `
mkdir -p evil/objects
for g in .git nested/.git .git/modules/sub; do
  mkdir -p $g/objects/info && echo "$PWD/evil/objects" > $g/objects/info/alternates || exit 1
  echo "http://127.0.0.1:1/objects" > $g/objects/info/http-alternates || exit 1
done
echo c > c.txt && git add c.txt && git commit -qm "in sandbox" && git commit-graph write --reachable`
	s := Spec{Command: cmd, Dir: ws, Env: append(gitEnv, "HOME="+ws), Writable: []string{ws},
		GitDirs: gl.Dirs, ReadOnly: gl.Links, Timeout: 20 * time.Second}
	r, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 {
		t.Fatalf("exit %d\n%s%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	for _, g := range []string{ws + "/.git", ws + "/nested/.git", ws + "/.git/modules/sub"} {
		for _, f := range []string{"alternates", "http-alternates"} {
			p := filepath.Join(g, "objects", "info", f)
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("%s kept on the host", p)
			}
			if !slices.Contains(r.GitDropped, p) {
				t.Errorf("%s not reported dropped: %q", p, r.GitDropped)
			}
		}
	}
	if got := hostGit(t, ws, "log", "-1", "--format=%s"); got != "in sandbox" {
		t.Errorf("last commit %q, want the sandbox's", got)
	}
}
