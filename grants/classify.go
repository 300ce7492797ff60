package grants

import (
	"strings"
)

// credentialNames are base names (globs) of files that usually hold secrets.
var credentialNames = []string{
	".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	".netrc", "_netrc", ".git-credentials", ".npmrc", ".pypirc", "*.kdbx", "*.p12", "*.pfx",
	"*.jks", "*.keystore", ".pgpass", ".my.cnf", "credentials.json", "service-account*.json",
	".htpasswd", "secrets.yml", "secrets.yaml", "*.tfvars", "terraform.tfstate*",
}

// credentialDirs are folders whose whole content is secret.
var credentialDirs = []string{".ssh", ".gnupg", ".password-store"}

// credentialSuffixes are path endings (two or more components) that hold secrets.
var credentialSuffixes = []string{
	".aws/credentials", ".aws/config", ".docker/config.json", ".kube/config",
	".config/gh/hosts.yml", ".config/gcloud/credentials.db", ".azure/accessTokens.json",
	".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml",
}

// IsCredentialPath reports whether a resolved path looks like it holds a
// secret. It only looks at the name: it does no I/O. It runs on every file
// request, so it avoids glob matching: every pattern in credentialNames is
// an exact name, a prefix ("id_rsa*"), a suffix ("*.pem") or one of each
// ("service-account*.json").
func IsCredentialPath(p string) bool {
	base := p[strings.LastIndexByte(p, '/')+1:]
	for _, g := range credentialNames {
		if matchSimpleGlob(g, base) {
			return true
		}
	}
	for _, d := range credentialDirs {
		if strings.Contains(p, "/"+d+"/") || strings.HasSuffix(p, "/"+d) {
			return true
		}
	}
	for _, s := range credentialSuffixes {
		if strings.HasSuffix(p, s) && len(p) > len(s) && p[len(p)-len(s)-1] == '/' {
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

// isGitCodePath reports whether p is a file through which git runs code:
// anything under a .git/hooks folder, or a .git/config file.
func isGitCodePath(p string) bool {
	return strings.HasSuffix(p, "/.git/config") || strings.HasSuffix(p, "/.git/hooks") || strings.Contains(p, "/.git/hooks/")
}
