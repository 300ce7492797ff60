package cmdline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stubNames are the programs the traced bash can run: stubs that log their
// name. Every other name is "command not found".
var stubNames = []string{"a", "b", "c", "d", "e", "f", "g", "h", "env", "nice", "timeout", "xargs", "nohup"}

// traceable reports a line worth running under the tracer: short, naming
// a stub, and without the builtins that only make noise there (ulimit,
// suspend). Safety does not depend on it: the run is confined (see tracer).
func traceable(line string) bool {
	if line == "" || len(line) > 512 || strings.Contains(line, "suspend") || strings.Contains(line, "ulimit") {
		return false
	}
	words := strings.FieldsFunc(line, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '-') })
	return slices.ContainsFunc(words, func(w string) bool { return slices.Contains(stubNames, w) })
}

// tracer runs lines under bash and reports the names of the stubs that
// ran. The run is confined: chrooted into a folder holding only bash, sh,
// their libraries and the stubs (so no real program exists to be run,
// whatever the line does), as nobody, with at most 64 processes, in its own
// PID and network namespaces, for at most a second.
type tracer struct {
	root string
}

func newTracer(t testing.TB) *tracer {
	t.Helper()
	fail := t.Skipf
	if os.Getenv("CI") == "true" {
		fail = t.Fatalf
	}
	if os.Getuid() != 0 {
		fail("the bash tracer chroots, which needs root")
		return nil
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		fail("bash not found: %v", err)
		return nil
	}
	root, err := os.MkdirTemp("", "bashtrace")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	// work is the line's folder; the others are there for a cd to reach.
	for _, d := range []string{"bin", "stubs", "work", "work/s", "work/s/t", "d", "d/e"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "work"), 0o777); err != nil {
		t.Fatal(err)
	}
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		fail("no /bin/sh: %v", err)
		return nil
	}
	for src, dst := range map[string]string{bash: "/bin/bash", sh: "/bin/sh"} {
		if err := copyWithLibs(root, src, dst); err != nil {
			fail("copying %s into the chroot: %v", src, err)
			return nil
		}
	}
	for _, n := range stubNames {
		stub := "#!/bin/sh\nprintf '%s %s\\n' \"${0##*/}\" \"$(pwd -P)\" >> /log\n"
		if err := os.WriteFile(filepath.Join(root, "stubs", n), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &tracer{root: root}
}

// copyWithLibs copies the program src to dst under root with the shared
// libraries ldd lists for it, at their own paths.
func copyWithLibs(root, src, dst string) error {
	out, err := exec.Command("ldd", src).Output()
	if err != nil {
		return fmt.Errorf("ldd: %w", err)
	}
	files := map[string]string{src: dst}
	for _, l := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(l) {
			if strings.HasPrefix(f, "/") {
				files[f] = f
			}
		}
	}
	for from, to := range files {
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		to = filepath.Join(root, to)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(to, b, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// run runs line and returns the stubs that ran, sorted, without repeats.
func (tr *tracer) run(t testing.TB, line string) []string {
	var ran []string
	for _, r := range tr.runDirs(t, line) {
		if !slices.Contains(ran, r.name) {
			ran = append(ran, r.name)
		}
	}
	slices.Sort(ran)
	return ran
}

// ranIn is a stub that ran and the folder it ran in.
type ranIn struct{ name, dir string }

// runDirs runs line and returns each stub run with its folder, in order.
func (tr *tracer) runDirs(t testing.TB, line string) []ranIn {
	t.Helper()
	log := filepath.Join(tr.root, "log")
	if err := os.WriteFile(log, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(log, 0o666); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	// An outer bash lowers the limits, then becomes the bash that runs
	// the line as its -c script.
	cmd := exec.CommandContext(ctx, "/bin/bash", "--norc", "--noprofile", "-c",
		`ulimit -u 64 -f 1000 && exec /bin/bash --norc --noprofile -c "$0"`, line)
	cmd.Path = "/bin/bash" // looked up inside the chroot
	cmd.Env = []string{"PATH=/stubs", "HOME=/work"}
	cmd.Dir = "/work"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// bash is the first process of a new PID namespace, so when it ends
	// the kernel kills whatever it left running; and of a new network
	// namespace, so /dev/tcp reaches nothing.
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: tr.root, Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNET,
		Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("running bash in the chroot: %v", err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var ran []ranIn
	for _, l := range strings.Split(string(b), "\n") {
		if name, dir, ok := strings.Cut(l, " "); ok {
			ran = append(ran, ranIn{name, dir})
		}
	}
	return ran
}

// checkTrace is the property: for a line the analyzer accepts and can
// follow entirely (no Dynamic command), every program bash ran is one of
// the analysis's commands, and one that ran outside the line's folder
// (/work) is one whose Dir says that folder or Dynamic (a cd the analysis
// takes as reached may fail: the line's own folder is the caller's to
// check anyway).
func checkTrace(t *testing.T, tr *tracer, line string) {
	if !traceable(line) {
		return
	}
	an, err := Analyze(line)
	if err != nil {
		return // refused: nothing runs
	}
	names := map[string]bool{}
	for _, c := range an.Commands {
		if c.Name == Dynamic || c.Option == "fork bomb" || c.Option == "recursive function" {
			return // the analyzer says it cannot know (or it would only spin)
		}
		names[baseName(c.Name)] = true
	}
	for _, r := range tr.runDirs(t, line) {
		if !names[r.name] {
			t.Errorf("%q: bash ran %q, which the analysis does not list: %+v", line, r.name, an.Commands)
		}
		if r.dir != "/work" && !slices.ContainsFunc(an.Commands, func(c Command) bool {
			dir := c.Dir
			if !path.IsAbs(dir) {
				dir = path.Join("/work", dir)
			}
			return baseName(c.Name) == r.name && (c.Dir == Dynamic || dir == r.dir)
		}) {
			t.Errorf("%q: bash ran %q in %s, which no Dir of the analysis says: %+v", line, r.name, r.dir, an.Commands)
		}
	}
}

// traceCases are lines whose programs bash runs in ways that are easy to
// miss; each runs at least one stub.
var traceCases = []string{
	"a; b && c || d",
	"a | b |& c",
	"(a; b) && { c; }",
	"x=`a`; b \"`c`\"",
	"echo \"$(a)\" $(b) <(c) >(d)",
	"f() { a; }; f; f",
	"if a; then b; elif c; then d; else e; fi",
	"for i in 1 2; do a; done; while false; do b; done; until true; do c; done",
	"case x in x) a;; y) b;; esac",
	"bash -c 'a; b'",
	"sh -c \"a | b\"",
	"eval 'a; b'",
	"trap 'a' EXIT; b",
	"env x=1 a",
	"nice -n 1 b",
	"timeout 5 c",
	"echo d | xargs e",
	"a <<x\nb\nx\nc",
	"bash <<x\na\nx",
	"cat <<x | b\n$(a)\nx",
	"coproc a; wait",
	"time a",
	"! a",
	"a & b; wait",
	"read -d t HOME < <(pwd); cd; PATH= a",
	"x=$(a <<y\nb\ny\n); c",
	"echo $(( $(a) + 1 ))",
	"[[ -n $(a) ]] && b",
	"declare x=$(a)",
	"echo $(cat <<x\nx); a #\nx\n)",
	"echo `cat <<x\nx; a\nx\n`",
	// The folder each runs in.
	"cd s && a; cd t; b; cd /d/e && c; cd .. && d",
	"(cd /d && a); b; cd s | c; d",
	"cd /d || a; b",
	"cd /nowhere || a; b",
	"for x in s t; do cd $x; a; done; b",
	"f() { cd /d; }; a; f; b",
	"g() { a; }; cd s; g; eval 'cd t'; b",
	"bash -c 'cd /d && a'; b",
	"env -C /d a; b",
	"if true; then cd s; else cd /d; fi; a",
	"pushd /d >/dev/null && a; popd >/dev/null; b",
	"cd -P -- s/t/.. && a; cd ~; b",
	"echo $(cd /d; a) && b",
}

// TestBashTrace runs traceCases and the class lines under bash.
func TestBashTrace(t *testing.T) {
	tr := newTracer(t)
	// The tracer itself must see the stubs run, or the property is empty.
	if got := tr.run(t, "a; b"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("stubs did not run: %q", got)
	}
	for _, line := range traceCases {
		checkTrace(t, tr, line)
	}
	for _, tc := range append(analyzeCases, classCases...) {
		checkTrace(t, tr, tc.line)
	}
}

// FuzzBashTrace checks the property on fuzzed lines (run with
// -fuzz=FuzzBashTrace; plain go test runs the seeds in testdata/fuzz).
func FuzzBashTrace(f *testing.F) {
	for _, l := range traceCases {
		f.Add(l)
	}
	tr := newTracer(f)
	f.Fuzz(func(t *testing.T, line string) {
		checkTrace(t, tr, line)
	})
}
