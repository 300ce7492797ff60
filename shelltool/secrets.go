package shelltool

import (
	"context"
	"io/fs"
	"path/filepath"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// maxScanEntries bounds the walk for credential files, so a huge tree
// costs a bounded time per command; what lies past the bound is not hidden
// (see the README's "what the sandbox does not cover").
const maxScanEntries = 50000

// skippedDirs are dependency and cache folders: not where people keep
// their secrets, and often most of a tree's entries.
var skippedDirs = map[string]bool{
	"node_modules": true, ".git": true, "vendor": true, ".venv": true, "venv": true,
	"__pycache__": true, ".cache": true, "target": true, ".gradle": true, ".m2": true,
}

// credentialFiles lists the files and folders beneath roots that look like
// credentials and that read_file would not be given (no allow rule names
// the exact path). The sandbox hides them, so a command cannot read what
// the policy keeps from the model: `cat .env` is refused like read_file
// .env. Each is decided, and audited, through the call's mid-action gate;
// anything the gate does not allow is hidden.
func credentialFiles(ctx context.Context, gate toolkit.MidAction, p *grants.Policy, roots []string) []string {
	var out []string
	seen := 0
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: the sandbox cannot read it either
			}
			if seen++; seen > maxScanEntries {
				return filepath.SkipAll
			}
			if d.IsDir() && path != root && skippedDirs[d.Name()] {
				return filepath.SkipDir
			}
			if path == root || !grants.IsCredentialPath(path) {
				return nil
			}
			if !readable(ctx, gate, p, path) {
				out = append(out, path)
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		})
	}
	return out
}

// readable reports whether the gate lets the command read path, a
// credential file, as read_file would be let.
func readable(ctx context.Context, gate toolkit.MidAction, p *grants.Policy, path string) bool {
	_, err := gate.Decide(ctx, credentialRead(p, path), grants.StageHop)
	return err == nil
}

// credentialRead is the request that decides whether a command may read
// path, a credential file: the run's (readable) and the package.install
// decision's (sandboxHides), so both see the same files hidden.
func credentialRead(p *grants.Policy, path string) grants.Request {
	c := grants.CapFilesystemRead
	if p.InWorkspace(path) {
		c = grants.CapWorkspaceRead
	}
	return grants.Request{Capability: c, Target: grants.Target{ToolName: Name, Path: path},
		Risk: grants.BaseRisk(c, grants.SurfaceNone), DataClasses: []grants.DataClass{grants.DataCredential}}
}

// sandboxHides reports whether the sandbox will hide path from a command,
// as Run decides it (credentialFiles, readable): a credential file the
// policy denies the command. One it would ask about counts as visible (an
// approval remembered for the session lets the command read it), so a
// decision that reads it names at most more indexes than the command
// reads, never fewer.
func sandboxHides(p *grants.Policy, path string) bool {
	return grants.IsCredentialPath(path) && p.Decide(credentialRead(p, path)).Effect == grants.Deny
}
