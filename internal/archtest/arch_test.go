// Package archtest guards the architecture: which packages may start
// processes, make HTTP requests, or do I/O while deciding, and that every
// package says what it owns.
package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sourceFile is one non-test Go file of the module.
type sourceFile struct {
	dir  string // module-relative folder, e.g. "shelltool/sandbox"
	name string
	file *ast.File
	text string
}

func moduleFiles(t *testing.T) []sourceFile {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var out []sourceFile
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		src, _ := fsReadFile(path)
		out = append(out, sourceFile{dir: filepath.ToSlash(rel), name: d.Name(), file: f, text: src})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("found only %d source files; is the test running from internal/archtest?", len(out))
	}
	return out
}

func imports(f *ast.File) []string {
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		out = append(out, p)
	}
	return out
}

func under(dir string, roots ...string) bool {
	for _, r := range roots {
		if dir == r || strings.HasPrefix(dir, r+"/") {
			return true
		}
	}
	return false
}

// TestOnlyTheSandboxStartsProcesses: commands run only through the sandbox
// package, so no tool can start one undecided or unsandboxed.
func TestOnlyTheSandboxStartsProcesses(t *testing.T) {
	for _, f := range moduleFiles(t) {
		if under(f.dir, "shelltool/sandbox", "e2e") {
			continue
		}
		if slices.Contains(imports(f.file), "os/exec") {
			t.Errorf("%s/%s imports os/exec; processes start only in shelltool/sandbox", f.dir, f.name)
		}
		for _, call := range []string{"os.StartProcess", "syscall.ForkExec", "syscall.Exec(", "unix.Exec("} {
			if strings.Contains(f.text, call) {
				t.Errorf("%s/%s calls %s; processes start only in shelltool/sandbox", f.dir, f.name, call)
			}
		}
	}
}

// TestOnlyWebtoolsMakesHTTPRequests: outbound HTTP goes through the guarded
// dialer, so no request can skip the private-address checks. The one
// exception is server/oauth's fetch of the identity provider's keys: its
// only destination is the jwks_url the host's config names, never one a
// model or client chooses.
func TestOnlyWebtoolsMakesHTTPRequests(t *testing.T) {
	for _, f := range moduleFiles(t) {
		if under(f.dir, "webtools", "e2e") || f.dir == "server/oauth" && f.name == "keys.go" {
			continue
		}
		for _, use := range []string{"http.Client", "http.Transport", "http.Get(", "http.Post(", "http.DefaultClient", ".RoundTrip(", "net.Dial(", "net.Dialer"} {
			if strings.Contains(f.text, use) {
				t.Errorf("%s/%s uses %s; outbound connections go through webtools", f.dir, f.name, use)
			}
		}
	}
}

// TestDecidingDoesNoIO: the files that decide a request import nothing that
// reads the world, so a decision depends only on the compiled policy.
func TestDecidingDoesNoIO(t *testing.T) {
	decisionFiles := []string{"decide.go", "classify.go", "model.go", "describe.go"}
	banned := []string{"os", "io", "io/fs", "net", "net/http", "syscall", "golang.org/x/sys/unix", "os/exec", "path/filepath"}
	seen := 0
	for _, f := range moduleFiles(t) {
		if f.dir != "grants" || !slices.Contains(decisionFiles, f.name) {
			continue
		}
		seen++
		for _, imp := range imports(f.file) {
			if slices.Contains(banned, imp) {
				t.Errorf("grants/%s imports %s; deciding must do no I/O", f.name, imp)
			}
		}
	}
	if seen != len(decisionFiles) {
		t.Fatalf("found %d of the decision files %v", seen, decisionFiles)
	}
}

// TestEveryPackageSaysWhatItOwns: each package has a doc comment.
func TestEveryPackageSaysWhatItOwns(t *testing.T) {
	documented := map[string]bool{}
	for _, f := range moduleFiles(t) {
		if _, ok := documented[f.dir]; !ok {
			documented[f.dir] = false
		}
		if f.file.Doc != nil && len(strings.TrimSpace(f.file.Doc.Text())) > 20 {
			documented[f.dir] = true
		}
	}
	for dir, ok := range documented {
		if !ok && dir != "." {
			t.Errorf("package %s has no doc comment saying what it owns", dir)
		}
	}
}

func fsReadFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
