package grants

import (
	"strings"

	"github.com/onellm/onellm-mcp/internal/gitmeta"
)

// credentialNames are base names (globs) of files that usually hold secrets.
var credentialNames = []string{
	".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	".netrc", "_netrc", ".git-credentials", ".npmrc", ".pypirc", "*.kdbx", "*.p12", "*.pfx",
	"*.jks", "*.keystore", ".pgpass", ".my.cnf", "credentials.json", "service-account*.json",
	".htpasswd", "secrets.yml", "secrets.yaml", "*.tfvars", "terraform.tfstate*", "*.token",
}

// credentialDirs are folders whose whole content is secret, written as the
// path component they are ("/.ssh/"), so matching needs no concatenation.
var credentialDirs = []string{"/.ssh/", "/.gnupg/", "/.password-store/"}

// credentialSuffixes are path endings (two or more components) that hold
// secrets, with their leading slash.
var credentialSuffixes = []string{
	"/.aws/credentials", "/.aws/config", "/.docker/config.json", "/.kube/config",
	"/.config/gh/hosts.yml", "/.config/gcloud/credentials.db", "/.azure/accessTokens.json",
	"/.cargo/credentials", "/.cargo/credentials.toml", "/.gem/credentials", "/.m2/settings.xml",
}

// IsCredentialPath reports whether a resolved path looks like it holds a
// secret. It only looks at the name: it does no I/O. It runs on every file
// request, so the name patterns are compiled once into lookups.
func IsCredentialPath(p string) bool {
	base := p[strings.LastIndexByte(p, '/')+1:]
	// A process's environment and memory hold whatever secrets it was
	// given: the server's own, through /proc/self, included.
	if strings.HasPrefix(p, "/proc/") && (base == "environ" || base == "mem") {
		return true
	}
	if credentialNameIndex.match(base) {
		return true
	}
	for _, d := range credentialDirs {
		if strings.Contains(p, d) || strings.HasSuffix(p, d[:len(d)-1]) {
			return true
		}
	}
	for _, s := range credentialSuffixes {
		if strings.HasSuffix(p, s) {
			return true
		}
	}
	return false
}

// nameIndex answers "does a base name match one of these simple globs" with
// map lookups: exact names, "*.ext" extensions, and the few patterns with a
// literal head checked one by one.
type nameIndex struct {
	exact, ext map[string]bool
	headed     []string // patterns that start with a literal ("id_rsa*")
}

// credentialNameIndex is built once from credentialNames and only read.
var credentialNameIndex = newNameIndex(credentialNames)

func newNameIndex(patterns []string) nameIndex {
	ix := nameIndex{exact: map[string]bool{}, ext: map[string]bool{}}
	for _, g := range patterns {
		star := strings.IndexByte(g, '*')
		switch {
		case star < 0:
			ix.exact[g] = true
		case star == 0 && strings.LastIndexByte(g, '.') == 1:
			ix.ext[g[1:]] = true // "*.pem" → ".pem"
		default:
			ix.headed = append(ix.headed, g)
		}
	}
	return ix
}

func (ix nameIndex) match(base string) bool {
	if ix.exact[base] {
		return true
	}
	if dot := strings.LastIndexByte(base, '.'); dot >= 0 && ix.ext[base[dot:]] {
		return true
	}
	for _, g := range ix.headed {
		if matchSimpleGlob(g, base) {
			return true
		}
	}
	return false
}

// matchSimpleGlob matches a pattern holding at most one '*' and no other
// metacharacter.
func matchSimpleGlob(pattern, name string) bool {
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		return pattern == name
	}
	prefix, suffix := pattern[:star], pattern[star+1:]
	return len(name) >= len(prefix)+len(suffix) && strings.HasPrefix(name, prefix) && strings.HasSuffix(name, suffix)
}

// isGitCodePath reports whether p is a part of a git directory through
// which git could be made to run code or look elsewhere (gitmeta.Protected:
// config, hooks/, info/, commondir, gitdir, a .git file, any new top-level
// entry; of the workspace's, nested repositories', submodules' and
// worktrees' git directories alike).
func isGitCodePath(p string) bool { return gitmeta.Protected(p) }
