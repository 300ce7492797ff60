package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Architecture is architecture.json: the parts of the module, the arrows
// between them (which part may import which), and the walls (which parts
// may use a kind of sensitive call), each with its reason.
type Architecture struct {
	Module string `json:"module"`
	// Parts maps a package (module-relative, "." for the root) to what it
	// owns and the module packages it may import.
	Parts map[string]Part `json:"parts"`
	Walls []Wall          `json:"walls"`
}

// Part is one package of the module.
type Part struct {
	Owns    string   `json:"owns"`
	Imports []string `json:"imports"`
}

// Wall says which parts may make one kind of call.
type Wall struct {
	Name string `json:"name"`
	// Calls are fully qualified function names as go/types prints them
	// ("os.Open", "(*net.Dialer).DialContext"), or types and package
	// variables ("net/http.Client"), whose every use counts; an entry
	// ending in ".*" names everything of that package.
	Calls   []string `json:"calls"`
	Allowed []string `json:"allowed"`
	Reason  string   `json:"reason"`
}

func loadArchitecture(path string) (Architecture, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Architecture{}, err
	}
	var a Architecture
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return Architecture{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, w := range a.Walls {
		if strings.TrimSpace(w.Reason) == "" || len(w.Calls) == 0 {
			return Architecture{}, fmt.Errorf("%s: wall %q needs calls and a reason", path, w.Name)
		}
	}
	for name, p := range a.Parts {
		if strings.TrimSpace(p.Owns) == "" {
			return Architecture{}, fmt.Errorf("%s: part %q does not say what it owns", path, name)
		}
	}
	return a, nil
}

// listedPackage is what `go list -json` says of a package.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	Export     string
	Standard   bool
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// goList lists the packages of the module at root and every dependency,
// with their export data (built if needed) for type checking.
func goList(root string) ([]listedPackage, error) {
	cmd := exec.Command("go", "list", "-deps", "-export", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v: %s", root, err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// violation is one way the code departs from the architecture.
type violation struct {
	Part, What string
}

func (v violation) String() string { return v.Part + ": " + v.What }

// check compares the module at root with its architecture: the real import
// graph against the arrows, every call a wall names against the parts it
// allows.
func check(root string, a Architecture) ([]violation, error) {
	pkgs, err := goList(root)
	if err != nil {
		return nil, err
	}
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	rel := func(path string) (string, bool) {
		if path == a.Module {
			return ".", true
		}
		r, ok := strings.CutPrefix(path, a.Module+"/")
		return r, ok
	}
	var out []violation
	seen := map[string]bool{}
	for _, p := range pkgs {
		name, mine := rel(p.ImportPath)
		if !mine || p.Module == nil || p.Module.Path != a.Module {
			continue
		}
		seen[name] = true
		part, ok := a.Parts[name]
		if !ok {
			out = append(out, violation{name, "is not in architecture.json: add it with what it owns and what it imports"})
			continue
		}
		for _, imp := range p.Imports {
			if r, ok := rel(imp); ok && !slices.Contains(part.Imports, r) {
				out = append(out, violation{name, "imports " + r + ", which architecture.json does not allow"})
			}
		}
		calls, err := sensitiveCalls(p, exports, a.Walls)
		if err != nil {
			return nil, err
		}
		out = append(out, wallViolations(name, calls, a.Walls)...)
	}
	for name := range a.Parts {
		if !seen[name] {
			out = append(out, violation{name, "is in architecture.json but not in the module"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// wallViolations reports the calls of a part that a wall keeps from it.
func wallViolations(part string, calls map[string][]string, walls []Wall) []violation {
	var out []violation
	for _, w := range walls {
		if slices.Contains(w.Allowed, part) {
			continue
		}
		for fn, where := range calls {
			if wallNames(w, fn) {
				out = append(out, violation{part, fmt.Sprintf("uses %s at %s; wall %q: %s", fn, where[0], w.Name, w.Reason)})
			}
		}
	}
	return out
}

func wallNames(w Wall, fn string) bool {
	for _, c := range w.Calls {
		if c == fn {
			return true
		}
		if pkg, ok := strings.CutSuffix(c, ".*"); ok && (strings.HasPrefix(fn, pkg+".") || strings.HasPrefix(fn, "("+pkg+".") || strings.HasPrefix(fn, "(*"+pkg+".")) {
			return true
		}
	}
	return false
}

// sensitiveCalls type-checks a package from its source against its
// dependencies' export data and returns every function, method, type or
// package variable it refers to (called, taken as a value, constructed)
// that some wall names, with where.
func sensitiveCalls(p listedPackage, exports map[string]string, walls []Wall) (map[string][]string, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, f := range slices.Concat(p.GoFiles, p.CgoFiles) {
		af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, af)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		e := exports[path]
		if e == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(e)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup), Error: func(error) {}}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil && len(p.CgoFiles) == 0 {
		return nil, fmt.Errorf("type-checking %s: %w", p.ImportPath, err)
	}
	out := map[string][]string{}
	for id, obj := range info.Uses {
		name := objectName(obj)
		if name == "" {
			continue
		}
		if !slices.ContainsFunc(walls, func(w Wall) bool { return wallNames(w, name) }) {
			continue
		}
		pos := fset.Position(id.Pos())
		out[name] = append(out[name], fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line))
	}
	for _, where := range out {
		sort.Strings(where)
	}
	return out, nil
}

// objectName names what an identifier refers to as walls write it: a
// function or method by its full name ("os.Open", "(*net.Dialer).Dial"),
// and a package-level type or variable by its package path and name
// ("net/http.Client", "net/http.DefaultClient"), so a wall can also keep a
// type from a part (a call through an interface is then still seen where
// the value is made). Other objects have no name here.
func objectName(obj types.Object) string {
	switch o := obj.(type) {
	case *types.Func:
		return o.FullName()
	case *types.TypeName, *types.Var:
		if o.Pkg() != nil && o.Parent() == o.Pkg().Scope() {
			return o.Pkg().Path() + "." + o.Name()
		}
	}
	return ""
}
