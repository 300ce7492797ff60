// Package archtest guards the architecture written in architecture.json:
// the parts of the module and the arrows between them (checked against the
// real import graph), the walls that say which parts may start processes,
// connect out, open files or decide (checked on the type-checked code, not
// its text), that deciding does no I/O, and that every package says what it
// owns. A fixture module under testdata breaks each rule, to show the check
// fails when it should.
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

// TestArchitecture checks the module against architecture.json: the real
// import graph (go list) against the arrows, and every reference to a
// function a wall names (found by type-checking, so aliases, method values
// and wrappers' receivers are seen) against the parts the wall allows.
func TestArchitecture(t *testing.T) {
	a, err := loadArchitecture("architecture.json")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := check("../..", a)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Error(v)
	}
}

// TestArchitectureCanFail runs the same check over a fixture module that
// breaks each kind of rule, and wants each break reported.
func TestArchitectureCanFail(t *testing.T) {
	a, err := loadArchitecture("testdata/violating/architecture.json")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := check("testdata/violating", a)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	want := []string{
		"extra: is not in architecture.json",
		"ghost: is in architecture.json but not in the module",
		"tool: imports grants, which architecture.json does not allow",
		"tool: uses (*example.com/violating/grants.Policy).Decide at tool.go:24; wall \"decide\"",
		"tool: uses (*net.Dialer).Dial at tool.go:22; wall \"dial\"",
		"tool: uses net/http.Client at tool.go:36; wall \"dial\"",
		"tool: uses os.Open at tool.go:17; wall \"open\"",
		"tool: uses os/exec.Command at tool.go:23; wall \"exec\"",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("violation %d:\n got  %s\n want %s…", i, got[i], want[i])
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
