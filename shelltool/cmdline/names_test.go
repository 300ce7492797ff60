package cmdline

import (
	"slices"
	"testing"
)

func TestProgramFamilies(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"perl5.36-x86_64-linux-gnu", []string{"perl5.36", "perl5", "perl"}},
		{"perl5.36.0", []string{"perl5.36", "perl5", "perl"}},
		{"python3.11", []string{"python3", "python"}},
		{"python3", []string{"python"}},
		{"pip3", []string{"pip"}},
		{"gcc-12", []string{"gcc"}},
		{"x86_64-linux-gnu-gcc-12", []string{"gcc-12", "gcc"}},
		{"valgrind.bin", []string{"valgrind"}},
		{"memcheck-amd64-linux", []string{"memcheck", "valgrind"}},
		{"qemu-riscv64-static", []string{"qemu-user"}},
		{"none", nil},
		{"aarch64-linux-gnu-python3.11-config", []string{"python3.11-config"}},
		{"cpan5.36-x86_64-linux-gnu", []string{"cpan5.36", "cpan5"}},
		{"bash5.2", []string{"bash5", "bash"}},
		{"zsh-5.9", []string{"zsh-5", "zsh"}},
		{"node20", []string{"node"}},
		// Digits right after an unknown name are part of it.
		{"base64", nil},
		{"diff3", nil},
		{"bzip2", nil},
		{"sha256sum", nil},
		{"perl", nil},
		{"x86_64", nil},
		{"7z", nil},
		{"3", nil},
		{"-12", nil},
		{"a.3", nil},
		{"", nil},
	} {
		if got := ProgramFamilies(tc.name); !slices.Equal(got, tc.want) {
			t.Errorf("ProgramFamilies(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A versioned or triplet-named interpreter is classified as its family.
func TestVersionedProgramsClassified(t *testing.T) {
	for _, argv := range [][]string{
		{"perl5.36-x86_64-linux-gnu", "-e", "system q(x)"},
		{"perl5.36.0", "-e", "1"},
		{"python3.11", "-c", "1"},
		{"x86_64-linux-gnu-python3.11", "-c", "1"},
	} {
		cmds, err := AnalyzeArgv(argv)
		if err != nil || len(cmds) == 0 {
			t.Fatalf("%q: %v", argv, err)
		}
		if c := cmds[0]; c.Risk < high {
			t.Errorf("%q: risk %v (%s), want high: an inline script", argv, c.Risk, c.Option)
		}
		if !KnownProgram(argv[0]) {
			t.Errorf("KnownProgram(%q) = false", argv[0])
		}
	}
}

// An installer's entry point run by its interpreter is that installer.
func TestInstallerEntryPoints(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		prog string // the program analysed after the interpreter ("" none)
		pkg  string
	}{
		{[]string{"node", "/usr/bin/npm", "i", "lodash"}, "npm", "lodash"},
		{[]string{"node", "--", "/usr/lib/node_modules/npm/bin/npm-cli.js", "install", "left-pad"}, "npm", "left-pad"},
		{[]string{"node", ".yarn/releases/yarn-4.1.0.cjs", "add", "x"}, "yarn-4.1.0", "x"},
		{[]string{"python3", "/usr/bin/pip3", "install", "requests"}, "pip3", "requests"},
		{[]string{"node", "/usr/lib/node_modules/npm/bin/npx-cli.js", "cowsay"}, "npx", "cowsay"},
		{[]string{"node", "build.js"}, "", ""},
		{[]string{"python3", "x.py", "install", "y"}, "", ""},
	} {
		a, err := AnalyzeProgram(tc.argv)
		if err != nil {
			t.Fatal(err)
		}
		var progs, pkgs []string
		for _, c := range a.Commands[1:] {
			progs = append(progs, c.Name)
		}
		for _, p := range a.Packages {
			pkgs = append(pkgs, p.Name)
		}
		switch {
		case tc.prog == "" && (len(progs) > 0 || len(pkgs) > 0):
			t.Errorf("%q: runs %q installing %q, want nothing", tc.argv, progs, pkgs)
		case tc.prog != "" && (!slices.Equal(progs, []string{tc.prog}) || !slices.Contains(pkgs, tc.pkg)):
			t.Errorf("%q: runs %q installing %q, want %s installing %s", tc.argv, progs, pkgs, tc.prog, tc.pkg)
		}
	}
}
