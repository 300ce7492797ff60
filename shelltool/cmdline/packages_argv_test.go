package cmdline

import (
	"fmt"
	"slices"
	"testing"
)

// programPackageCases: the Packages of one program as the exec gate sees
// it (AnalyzeProgram: argv, every word literal), as "name host manager".
var programPackageCases = []struct {
	argv []string
	want []string
}{
	// python's options before -m, other modules that run an installer.
	{[]string{"python3", "-R", "-m", "pip", "install", "x"}, []string{"x pypi.org pip"}},
	{[]string{"python3.12", "-IBm", "pip", "install", "x"}, []string{"x pypi.org pip"}},
	{[]string{"python3", "--check-hash-based-pycs", "always", "-m", "pip", "install", "x"}, []string{"x pypi.org pip"}},
	{[]string{"python3", "--future", "-m", "pip", "install", "x"}, []string{"<dynamic> <dynamic> pip"}},
	{[]string{"python3", "-m", "pip._internal.cli.main", "install", "x"}, []string{"x pypi.org pip"}},
	{[]string{"python3", "-m", "uv", "pip", "install", "x"}, []string{"x pypi.org pip"}},
	{[]string{"python3", "-m", "pipx", "install", "x"}, []string{"x pypi.org pipx"}},
	{[]string{"python3", "-m", "poetry", "add", "x"}, []string{"x pypi.org poetry"}},
	// URL and scp-like git specs.
	{[]string{"npm", "i", "ssh://git@host.example:2222/o/r"}, []string{"ssh://git@host.example:2222/o/r host.example npm"}},
	{[]string{"poetry", "add", "git+ssh://git@gitlab.example:o/r.git"}, []string{"git+ssh://git@gitlab.example:o/r.git gitlab.example poetry"}},
	{[]string{"pip", "install", "pkg @ git+ssh://git@gitlab.example:o/r.git"}, []string{"pkg @ git+ssh://git@gitlab.example:o/r.git gitlab.example pip"}},
	{[]string{"pip", "install", "-r", "https://idx.example/req.txt"}, []string{"(https://idx.example/req.txt) pypi.org pip", "https://idx.example/req.txt idx.example pip"}},
	// Installers the table lacked.
	{[]string{"pnpm", "create", "vite"}, []string{"create-vite registry.npmjs.org pnpm"}},
	{[]string{"yarn", "create", "vite"}, []string{"create-vite registry.yarnpkg.com yarn"}},
	{[]string{"npm", "init", "vite"}, []string{"create-vite registry.npmjs.org npm"}},
	{[]string{"bun", "create", "x"}, []string{"create-x registry.npmjs.org bun"}},
	{[]string{"composer", "global", "require", "x/y"}, []string{"x/y repo.packagist.org composer"}},
	{[]string{"corepack", "pnpm", "add", "lodash"}, []string{"pnpm registry.npmjs.org corepack", "lodash registry.npmjs.org pnpm"}},
	{[]string{"mamba", "install", "numpy"}, []string{"numpy conda.anaconda.org mamba"}},
	{[]string{"micromamba", "install", "numpy"}, []string{"numpy conda.anaconda.org micromamba"}},
	{[]string{"pdm", "add", "requests"}, []string{"requests pypi.org pdm"}},
	{[]string{"pixi", "add", "numpy"}, []string{"numpy conda.anaconda.org pixi"}},
	{[]string{"rye", "sync"}, []string{"(pyproject.toml) pypi.org rye"}},
	{[]string{"python3", "-c", "import pip", "-m", "pip", "install", "x"}, nil},
}

func TestProgramPackages(t *testing.T) {
	for _, tc := range programPackageCases {
		an, err := AnalyzeProgram(tc.argv)
		if err != nil {
			t.Errorf("AnalyzeProgram(%q): %v", tc.argv, err)
			continue
		}
		var got []string
		for _, p := range an.Packages {
			got = append(got, fmt.Sprintf("%s %s %s", p.Name, p.Host, p.Manager))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("AnalyzeProgram(%q) packages:\n got  %q\n want %q", tc.argv, got, tc.want)
		}
	}
}
