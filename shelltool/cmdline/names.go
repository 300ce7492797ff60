package cmdline

import (
	"regexp"
	"slices"
	"strings"
)

// tripletRE matches a GNU target triplet before or after a program's
// name, as Debian and cross toolchains install them
// (perl5.36-x86_64-linux-gnu, x86_64-linux-gnu-gcc-12).
var (
	tripletArch   = `(?:x86_64|x86-64|amd64|i[3-6]86|aarch64|arm64|arm[a-z0-9]*|riscv(?:32|64)|powerpc(?:64)?(?:le)?|ppc(?:64)?(?:le)?|s390x|mips[a-z0-9]*|loongarch64|sparc(?:64)?|m68k|alpha|hppa|sh4)`
	tripletSys    = `(?:-[a-z0-9_]+)?-(?:linux-gnu[a-z0-9]*|linux-musl[a-z0-9]*|linux-android[a-z0-9]*|linux|w64-mingw32|mingw32|elf|none-eabi[a-z]*|gnu|darwin[0-9.]*|freebsd[0-9.]*)`
	tripletSuffix = regexp.MustCompile(`^(.+?)-` + tripletArch + tripletSys + `$`)
	tripletPrefix = regexp.MustCompile(`^` + tripletArch + tripletSys + `-(.+)$`)
)

// ProgramFamilies are the other names a program of this base name is
// also, nearest first: the name without a target triplet
// (perl5.36-x86_64-linux-gnu is perl5.36, x86_64-linux-gnu-gcc-12 is
// gcc-12), then without each part of its version (perl5.36, perl5, perl;
// gcc-12, gcc). A rule on a program names its family: `deny perl` holds
// for /usr/bin/perl5.36-x86_64-linux-gnu, `deny python3` for python3.11,
// so both the line and the exec gate decide a program by these names too
// (the stricter decision wins). Digits that follow a name with no dot or
// dash before them are a version only where the name without them is a
// program the analysis knows (python3, pip3; not base64 or diff3).
func ProgramFamilies(name string) []string {
	out := programFamilies(name)
	if l := inProcessLoader(name, out); l != "" {
		out = append(out, l)
	}
	return out
}

// programFamilies is ProgramFamilies without the loaders' names.
func programFamilies(name string) []string {
	var out []string
	t := name
	if m := tripletSuffix.FindStringSubmatch(t); m != nil {
		t = m[1]
	} else if m := tripletPrefix.FindStringSubmatch(t); m != nil {
		t = m[1]
	}
	if t != name {
		out = append(out, t)
	}
	for {
		next, ok := trimVersionPart(t)
		if !ok {
			return out
		}
		t = next
		out = append(out, t)
	}
}

// trimVersionPart removes the last part of a version that ends name:
// ".36" of perl5.36, "-12" of gcc-12, "5" of perl5 (digits right after
// letters: only where what is left is a program the analysis knows).
func trimVersionPart(name string) (string, bool) {
	end := len(name)
	for end > 0 && isDigit(name[end-1]) {
		end--
	}
	if end == len(name) || end == 0 {
		return "", false
	}
	switch name[end-1] {
	case '.':
		if end-1 == 0 || !isDigit(name[end-2]) {
			return "", false // "x.3" is no version of "x."
		}
		return name[:end-1], true
	case '-':
		if end-1 == 0 {
			return "", false
		}
		return name[:end-1], true
	}
	stem := name[:end]
	if knownName(stem) || installers[stem] != nil {
		return stem, true
	}
	return "", false
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// familyName is the last of ProgramFamilies (name itself when it has
// none): the name the analysis's tables know a program by.
func familyName(name string) string {
	if f := ProgramFamilies(name); len(f) > 0 {
		return f[len(f)-1]
	}
	return name
}

// Programs that load the program they are given into their own process
// (no exec the gate could see): valgrind's launcher (valgrind.bin, which
// /usr/bin/valgrind, a script, runs) and its tools
// (memcheck-amd64-linux, none-amd64-linux: the launcher execs one, and one
// run directly with VALGRIND_LAUNCHER set loads the program too), qemu's
// user-mode emulators (qemu-x86_64, qemu-aarch64-static) and box64/box86.
// Each is decided as the wrapper it is (inProcessLoader), so the program
// it loads is decided by its words, on the line and at exec, as
// `valgrind rm x` is.
var (
	valgrindTools = []string{"memcheck", "cachegrind", "callgrind", "helgrind", "drd", "massif", "dhat", "lackey",
		"none", "exp-bbv", "exp-sgcheck", "exp-dhat", "getoff"}
	qemuUser = regexp.MustCompile(`^qemu-` + tripletArch + `(?:eb|el|be|le|n32|abi32|64|32)*(?:-static)?$`)
)

// loaderFamilies are the wrappers inProcessLoader names; a program whose
// family is one is classified as that wrapper.
var loaderFamilies = map[string]bool{"valgrind": true, "qemu-user": true}

// inProcessLoader is the wrapper a program of this base name is as a
// loader of another program ("valgrind", "qemu-user"), "" for none;
// families are the name's programFamilies (memcheck-amd64-linux's first is
// memcheck; a tool name with a version, memcheck-2, is taken as one too:
// only stricter).
func inProcessLoader(name string, families []string) string {
	switch {
	case name == "valgrind.bin":
		return "valgrind"
	case len(families) > 0 && slices.Contains(valgrindTools, families[0]):
		return "valgrind"
	case strings.HasPrefix(name, "qemu-") && qemuUser.MatchString(name):
		return "qemu-user"
	}
	return ""
}
