package shelltool

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"

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
	c := grants.CapFilesystemRead
	if p.InWorkspace(path) {
		c = grants.CapWorkspaceRead
	}
	_, err := gate.Decide(ctx, grants.Request{Capability: c, Target: grants.Target{ToolName: Name, Path: path},
		Risk: grants.BaseRisk(c, grants.SurfaceNone), DataClasses: []grants.DataClass{grants.DataCredential}}, grants.StageHop)
	return err == nil
}

// sandboxHides reports whether the sandbox hides path from a command, as
// Run finds it (credentialFiles, p.SecretFiles): a brokered secret's
// source, or a credential file no allow rule names exactly (readable lets
// through no other: the credential-flow deny holds). One a rule names counts
// as visible, though a deny or ask rule may still keep it hidden, so a
// decision that reads it names at most more indexes than the command
// reads, never fewer. (Only the server decides: this is no decision, it
// reads the rules the decision will apply.)
func sandboxHides(p *grants.Policy, path string) bool {
	if slices.Contains(p.SecretFiles(), path) {
		return true
	}
	return grants.IsCredentialPath(path) && !slices.Contains(p.LiftedCredentialPaths(), path)
}
