package cmdline

import (
	"net/url"
	"strings"
)

// npm package specs (npm install SPEC).
//
// npm reads an operand as npm-package-arg does (npa and resolve in its
// lib/npa.js, hosted-git-info's fromUrl): a registry name and range
// ("x", "x@1", "@s/x@^2", "x@npm:y@1" an alias), a local path or file:
// spec (no network), a hosted git shortcut ("github:u/r", bare "u/r",
// "gitlab:", "bitbucket:", "gist:", "sourcehut:") fetched from that git
// host, an scp-like git address ("git@host:u/r.git") or a URL. packageURL
// reads the URLs.

// npmGitShortcuts are hosted-git-info's shortcuts and their hosts.
var npmGitShortcuts = map[string]string{
	"github:": "github.com", "gitlab:": "gitlab.com", "bitbucket:": "bitbucket.org",
	"gist:": "gist.github.com", "sourcehut:": "git.sr.ht",
}

// npmSpec returns where an npm operand that is no registry package is
// fetched from: a URL spec's URL and host (as packageURL), "" for a local
// path or file: spec, the git host for a git shortcut or scp-like address,
// Dynamic for what npm cannot read; ok is false for a registry package
// (fetched from the index).
func npmSpec(word string) (u, host string, ok bool) {
	if word == Dynamic {
		return "", "", false
	}
	spec := word
	at := -1
	if len(word) > 1 {
		if i := strings.IndexByte(word[1:], '@'); i >= 0 {
			at = i + 1
		}
	}
	namePart := word
	if at > 0 {
		namePart = word[:at]
	}
	switch {
	case npmIsURL(word), npmIsSCP(word):
	case !strings.HasPrefix(namePart, "@") && (strings.Contains(namePart, "/") || npmIsFileType(namePart)):
	case at > 0:
		spec = word[at+1:]
		if spec == "" {
			return "", "", false // x@ is x@*
		}
	case strings.HasPrefix(word, "@"):
		return "", "", false // a scoped name
	}
	return npmResolve(spec)
}

// NPMDependencyHost is where npm fetches a dependency a manifest lists
// under a name (package.json's "x": SPEC): ok is false for a registry
// package; host is the git host of a git spec, the URL's host, "" for a
// local path, Dynamic for what npm cannot read.
func NPMDependencyHost(spec string) (u, host string, ok bool) {
	if spec == "" {
		return "", "", false // "*"
	}
	return npmResolve(spec)
}

// npmResolve is npa's resolve of a spec (the part after "name@").
func npmResolve(spec string) (u, host string, ok bool) {
	lower := strings.ToLower(spec)
	switch {
	case strings.HasPrefix(lower, "file:") || npmIsPosixFile(spec):
		return "", "", true
	case strings.HasPrefix(lower, "npm:"):
		return "", "", false // an alias of a registry package
	case npmIsGitHubShorthand(spec):
		return "", "github.com", true
	}
	if scheme, _, found := strings.Cut(lower, ":"); found {
		if h, ok := npmGitShortcuts[scheme+":"]; ok {
			return "", h, true
		}
	}
	switch {
	case npmIsSCP(spec):
		return "", npmSCPHost(spec), true
	case npmIsURL(spec):
		if u, h, ok := packageURL(spec); ok {
			return u, h, true
		}
		return "", Dynamic, true // a scheme npm refuses, or a URL without "//"
	case strings.Contains(spec, "/") || npmIsFileType(spec):
		return "", "", true
	}
	return "", "", false
}

// npmIsURL is npa's isURL: /^(?:git[+])?[a-z]+:/i.
func npmIsURL(s string) bool {
	t := strings.ToLower(s)
	t = strings.TrimPrefix(t, "git+")
	i := 0
	for i < len(t) && t[i] >= 'a' && t[i] <= 'z' {
		i++
	}
	return i > 0 && i < len(t) && t[i] == ':'
}

// npmIsSCP is an scp-like git address: npa's isGit
// (/^[^@]+@[^:.]+\.[^:]+:.+$/, which npa reads as git+ssh://WORD) or
// such a git+ssh:// spec (fromURL's /^git\+ssh:\/\/([^:#]+:[^#]+)/, a
// port number not being a path).
func npmIsSCP(s string) bool {
	if rest, ok := cutPrefixFold(s, "git+ssh://"); ok {
		hostPart, path, found := strings.Cut(rest, ":")
		if !found || hostPart == "" || strings.Contains(hostPart, "#") || path == "" || strings.HasPrefix(path, "#") {
			return false
		}
		digits := strings.IndexFunc(path, func(r rune) bool { return r < '0' || r > '9' })
		return digits == 0 || digits > 0 && path[digits] != '/' // ":22/" or ":22" is a port
	}
	if npmIsURL(s) {
		return false // npa reads a URL (ssh://git@h:2222/r) as one, never as isGit
	}
	user, rest, found := strings.Cut(s, "@")
	if !found || user == "" {
		return false
	}
	h, path, found := strings.Cut(rest, ":")
	dot := strings.IndexByte(h, '.')
	return found && path != "" && dot > 0 && dot < len(h)-1
}

// npmSCPHost is the host of an scp-like git address ([git+ssh://]user@host:path).
func npmSCPHost(s string) string {
	rest, _ := cutPrefixFold(s, "git+ssh://")
	return scpHost(rest)
}

// scpHost is the host of an scp-like address without its scheme
// ([user@]host:path, also what follows ssh:// or git+ssh:// in
// "git+ssh://git@h:o/r.git", which poetry takes): Dynamic when it is no
// plain host name.
func scpHost(rest string) string {
	hostPart, _, _ := strings.Cut(rest, ":")
	if i := strings.LastIndexByte(hostPart, '@'); i >= 0 {
		hostPart = hostPart[i+1:]
	}
	if hostPart == "" || strings.ContainsAny(hostPart, "/?#[] \t\n\\") {
		return Dynamic
	}
	if u, err := url.Parse("ssh://" + hostPart + "/"); err != nil || u.Hostname() == "" {
		return Dynamic
	}
	return strings.ToLower(hostPart)
}

// npmIsFileType is npa's isFileType: /[.](?:tgz|tar\.gz|tar)$/i.
func npmIsFileType(s string) bool {
	t := strings.ToLower(s)
	return strings.HasSuffix(t, ".tgz") || strings.HasSuffix(t, ".tar.gz") || strings.HasSuffix(t, ".tar")
}

// npmIsPosixFile is npa's isPosixFile: /^(?:[.]|~[/]|[/]|[a-zA-Z]:)/.
func npmIsPosixFile(s string) bool {
	switch {
	case strings.HasPrefix(s, ".") || strings.HasPrefix(s, "~/") || strings.HasPrefix(s, "/"):
		return true
	case len(s) >= 2 && s[1] == ':':
		c := s[0] | 0x20
		return c >= 'a' && c <= 'z'
	}
	return false
}

// npmIsGitHubShorthand is hosted-git-info's isGitHubShorthand ("u/r",
// "u/r#ref"): one slash, not first nor last, no ".", "@", ":" or space
// in front of the first "#".
func npmIsGitHubShorthand(s string) bool {
	head, _, hashed := strings.Cut(s, "#")
	slash := strings.IndexByte(head, '/')
	switch {
	case slash <= 0 || strings.Contains(head[slash+1:], "/"):
		return false
	case strings.HasPrefix(s, ".") || strings.ContainsAny(head, "@:") || strings.ContainsAny(head, " \t\n\r\f\v"):
		return false
	case hashed:
		return !strings.HasSuffix(head, "/")
	}
	return !strings.HasSuffix(s, "/")
}

// cutPrefixFold is strings.CutPrefix ignoring ASCII case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
