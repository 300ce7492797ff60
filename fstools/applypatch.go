package fstools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/fstools/patch"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// ApplyPatchName is the apply_patch tool's public name.
const ApplyPatchName = "apply_patch"

// Edit is one exact-text edit.
type Edit struct {
	Path       string `json:"path" jsonschema:"File to edit: absolute, ~/…, or relative to the workspace"`
	OldText    string `json:"old_text" jsonschema:"Exact text to replace; must occur once unless replace_all. Empty on a missing path creates the file"`
	NewText    string `json:"new_text" jsonschema:"Replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence"`
}

// ApplyPatchArgs are apply_patch's arguments: exactly one of Patch or Edits.
type ApplyPatchArgs struct {
	Patch  string `json:"patch,omitempty" jsonschema:"A unified diff (git diff / diff -u) or a *** Begin Patch envelope"`
	Edits  []Edit `json:"edits,omitempty" jsonschema:"Exact-text edits, applied in order"`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"Check and report without writing"`
}

// FileResult is what apply_patch did (or would do) to one file.
type FileResult struct {
	Path    string `json:"path"`
	Action  string `json:"action"` // created, modified, deleted, renamed
	From    string `json:"from,omitempty"`
	Hunks   int    `json:"hunks"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Fuzz    int    `json:"fuzz"`
	Offsets []int  `json:"offsets,omitempty"`
}

// ApplyPatchResult is apply_patch's structured result.
type ApplyPatchResult struct {
	DryRun bool         `json:"dry_run"`
	Files  []FileResult `json:"files"`
}

// ApplyPatch is the apply_patch tool. Build it with NewApplyPatch: it holds
// the locks that serialise changes to the same file.
type ApplyPatch struct {
	locks pathLocks
}

// NewApplyPatch returns the apply_patch tool.
func NewApplyPatch() *ApplyPatch { return &ApplyPatch{} }

// Name implements toolkit.Tool.
func (*ApplyPatch) Name() string { return ApplyPatchName }

// Capabilities implements toolkit.Tool.
func (*ApplyPatch) Capabilities() []grants.Capability {
	return []grants.Capability{grants.CapWorkspaceWrite, grants.CapWorkspaceDelete, grants.CapFilesystemWrite, grants.CapFilesystemDelete}
}

// Definition implements toolkit.Tool.
func (t *ApplyPatch) Definition(p *grants.Policy) mcp.Tool {
	desc := "Change files, all or nothing. Give exactly one of `patch` (a unified diff as `git diff` or `diff -u` writes it, " +
		"with new files from /dev/null, deletions, renames and mode changes; or a `*** Begin Patch` … `*** End Patch` envelope " +
		"with Add File / Update File / Delete File / Move to) or `edits` (a list of {path, old_text, new_text, replace_all}; " +
		"old_text must occur exactly once unless replace_all; an empty old_text on a missing path creates the file). " +
		"dry_run reports without writing. Diff paths are relative to the workspace " + p.Workspace + ". " +
		"A hunk whose context moved is placed nearby (the result reports offset and fuzz); one that cannot be placed fails the whole patch " +
		"with the closest text found. Line endings, a BOM, the final newline and file modes are kept.\n\n" +
		p.Summary(t.Capabilities()...)
	return mcp.NewTool(ApplyPatchName,
		mcp.WithDescription(desc),
		toolkit.WithSchemas(toolkit.EmbeddedSchema(schemaFiles, "apply_patch.input.json"), toolkit.EmbeddedSchema(schemaFiles, "apply_patch.output.json")),
		mcp.WithToolAnnotation(toolkit.Annotations("Apply patch", false, true, false, false)),
	)
}

// fileOp is one file's planned change, paths resolved.
type fileOp struct {
	change  *patch.FileChange // nil for edits
	edits   []Edit
	src     Resolved // the file read (update, delete, rename source)
	dst     Resolved // the file written (add, update, rename destination)
	op      patch.Op
	display string
}

// Plan implements toolkit.Tool. It parses and resolves only: no file is
// read before the policy has decided every request.
func (t *ApplyPatch) Plan(_ context.Context, env *toolkit.Env, raw json.RawMessage) (*toolkit.Plan, error) {
	var args ApplyPatchArgs
	if err := toolkit.Decode(raw, &args); err != nil {
		return nil, err
	}
	var ops []*fileOp
	var err error
	switch {
	case args.Patch != "" && len(args.Edits) > 0:
		return nil, toolkit.Argf("give either patch or edits, not both")
	case args.Patch != "":
		ops, err = planPatch(env.Policy, args.Patch)
	case len(args.Edits) > 0:
		ops, err = planEdits(env.Policy, args.Edits)
	default:
		return nil, toolkit.Argf("give a patch (unified diff or *** Begin Patch envelope) or a list of edits")
	}
	if err != nil {
		return nil, err
	}
	var reqs []grants.Request
	exposes := false
	for _, o := range ops {
		// A change that reads the file's content (to place hunks, to find
		// old_text, to check a deletion, or to report a dry run) is a read
		// too: its errors and results quote that content.
		if o.readsContent(args.DryRun) {
			r := o.src.Request(ApplyPatchName, o.src.ReadCapability())
			exposes = exposes || r.HasClass(grants.DataCredential)
			reqs = append(reqs, r)
		}
		switch {
		case o.op == patch.OpDelete:
			reqs = append(reqs, o.src.Request(ApplyPatchName, o.src.DeleteCapability()))
		case o.src.Real != "" && o.src.Real != o.dst.Real: // rename
			reqs = append(reqs, o.dst.Request(ApplyPatchName, o.dst.WriteCapability()),
				o.src.Request(ApplyPatchName, o.src.DeleteCapability()))
		default:
			reqs = append(reqs, o.dst.Request(ApplyPatchName, o.dst.WriteCapability()))
		}
	}
	journal := JournalDir(env.Policy)
	return &toolkit.Plan{Requests: reqs, Run: func(context.Context, toolkit.Grant) toolkit.Result {
		r := t.run(ops, args.DryRun, journal)
		if exposes {
			r.Outcome.Exposed = []grants.DataClass{grants.DataCredential}
		}
		return r
	}}, nil
}

// readsContent reports whether the change reads its source's content in a
// way the result or an error can show.
func (o *fileOp) readsContent(dryRun bool) bool {
	switch {
	case o.src.Real == "":
		return false // a new file
	case dryRun:
		return true
	case o.change == nil: // edits: all but one creating a missing file
		for _, e := range o.edits {
			if e.OldText != "" {
				return true
			}
		}
		return false // only creates: an existing file is refused without a word of it
	}
	return len(o.change.Hunks) > 0
}

func planPatch(p *grants.Policy, text string) ([]*fileOp, error) {
	changes, err := patch.Parse(text)
	if err != nil {
		return nil, toolkit.Argf("patch: %v", err)
	}
	var ops []*fileOp
	seen := map[string]string{}
	claim := func(r Resolved, as string) error {
		if prev, ok := seen[r.Real]; ok {
			return toolkit.Argf("patch: %s is changed twice (%s and %s); merge those changes", r.Real, prev, as)
		}
		seen[r.Real] = as
		return nil
	}
	for i := range changes {
		fc := &changes[i]
		o := &fileOp{change: fc, op: fc.Op, display: fc.Path()}
		if fc.OldPath != "" {
			if o.src, err = resolvePatchPath(p, fc.OldPath); err != nil {
				return nil, err
			}
			if err := claim(o.src, fc.OldPath); err != nil {
				return nil, err
			}
		}
		if fc.NewPath != "" {
			if o.dst, err = resolvePatchPath(p, fc.NewPath); err != nil {
				return nil, err
			}
			if fc.OldPath == "" || o.dst.Real != o.src.Real {
				if err := claim(o.dst, fc.NewPath); err != nil {
					return nil, err
				}
			}
		}
		if fc.NewMode&0o170000 == 0o120000 {
			return nil, toolkit.Argf("patch: %s: symlinks are not supported", fc.Path())
		}
		ops = append(ops, o)
	}
	return ops, nil
}

func planEdits(p *grants.Policy, edits []Edit) ([]*fileOp, error) {
	byPath := map[string]*fileOp{}
	var ops []*fileOp
	for i, e := range edits {
		if e.Path == "" {
			return nil, toolkit.Argf("edits[%d]: path is required", i)
		}
		if e.OldText == e.NewText && e.OldText != "" {
			return nil, toolkit.Argf("edits[%d]: old_text and new_text are the same; nothing would change", i)
		}
		r, err := resolveArg(p, e.Path)
		if err != nil {
			return nil, err
		}
		o := byPath[r.Real]
		if o == nil {
			o = &fileOp{src: r, dst: r, op: patch.OpUpdate, display: e.Path}
			byPath[r.Real] = o
			ops = append(ops, o)
		}
		o.edits = append(o.edits, e)
	}
	return ops, nil
}

func resolvePatchPath(p *grants.Policy, rel string) (Resolved, error) {
	r, err := ResolveRelative(p, rel)
	if err != nil {
		return Resolved{}, toolkit.Argf("patch path %q: %v", rel, err)
	}
	return r, nil
}

func resolveArg(p *grants.Policy, arg string) (Resolved, error) {
	r, err := Resolve(p, arg)
	if err != nil {
		return Resolved{}, toolkit.Argf("path %q: %v", arg, err)
	}
	return r, nil
}

// computed is a file's new state, ready to write.
type computed struct {
	op      *fileOp
	prev    *original // nil when the file is new
	content []byte    // nil for a deletion
	mode    os.FileMode
	result  FileResult
}

// maxAttempts bounds how often a patch is placed again against a file that
// changed on disk meanwhile.
const maxAttempts = 5

// run reads every file, places every hunk, and only then writes, all or
// nothing, holding the locks of every file it touches. A file that changed
// on disk between the read and the switch is read again and the patch
// placed again, when it still applies exactly.
func (t *ApplyPatch) run(ops []*fileOp, dryRun bool, journalDir string) toolkit.Result {
	var paths []string
	for _, o := range ops {
		paths = append(paths, o.src.Real, o.dst.Real)
	}
	defer t.locks.lock(slices.DeleteFunc(paths, func(p string) bool { return p == "" }))()
	for attempt := 1; ; attempt++ {
		var plan []computed
		for _, o := range ops {
			c, err := compute(o, attempt > 1)
			if err != nil {
				return toolkit.Failed("apply_patch: nothing was changed: %v", err)
			}
			plan = append(plan, c)
		}
		out := ApplyPatchResult{DryRun: dryRun}
		for _, c := range plan {
			out.Files = append(out.Files, c.result)
		}
		if !dryRun {
			err := commit(plan, journalDir)
			var conflict *ConflictError
			if errors.As(err, &conflict) && !conflict.Appeared && attempt < maxAttempts {
				continue
			}
			if err != nil {
				return toolkit.Failed("apply_patch: %v", err)
			}
		}
		return toolkit.Result{
			Tool:    mcp.NewToolResultStructured(out, summarize(out)),
			Outcome: toolkit.Outcome{FilesChanged: len(out.Files) * boolInt(!dryRun)},
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compute reads the file and places the change. With exact (a second
// placement, after the file changed on disk) hunks must match without fuzz.
func compute(o *fileOp, exact bool) (computed, error) {
	c := computed{op: o, mode: 0o644}
	r := FileResult{Path: o.dst.Real}
	var prev *original
	if o.src.Real != "" {
		orig, err := readOriginal(o.src.Real)
		switch {
		case err == nil:
			prev = &orig
			c.mode = orig.mode
		case errors.Is(err, os.ErrNotExist) && o.change == nil:
			// an edit creating a file: handled below
		case errors.Is(err, os.ErrNotExist):
			return c, fmt.Errorf("%s does not exist", o.src.Real)
		default:
			return c, err
		}
	}
	switch {
	case o.change == nil: // edits
		var content []byte
		if prev != nil {
			content = prev.content
		}
		for i, e := range o.edits {
			next, n, err := patch.ApplyEdit(content, e.OldText, e.NewText, e.ReplaceAll)
			if err != nil {
				return c, fmt.Errorf("%s: edit %d: %v", o.display, i+1, err)
			}
			r.Hunks += n
			r.Added += strings.Count(e.NewText, "\n") * n
			r.Removed += strings.Count(e.OldText, "\n") * n
			content = next
		}
		c.content = content
		r.Action = "modified"
		if prev == nil {
			r.Action = "created"
		}
	case o.op == patch.OpAdd:
		if o.dst.Exists || exists(o.dst.Real) {
			return c, fmt.Errorf("%s already exists; the patch adds it as a new file", o.dst.Real)
		}
		res, err := patch.Apply(nil, *o.change)
		if err != nil {
			return c, err
		}
		c.content, r.Action = res.Content, "created"
		fill(&r, res)
	case o.op == patch.OpDelete:
		if prev == nil {
			return c, fmt.Errorf("%s does not exist", o.src.Real)
		}
		if len(o.change.Hunks) > 0 { // a diff that lists the content: it must match
			res, err := patch.Apply(prev.content, *o.change)
			if err != nil {
				return c, err
			}
			if len(res.Content) != 0 {
				return c, fmt.Errorf("%s: the deletion's content does not match the file", o.src.Real)
			}
			fill(&r, res)
		}
		r.Path, r.Action = o.src.Real, "deleted"
	default: // update, maybe renamed
		if prev == nil {
			return c, fmt.Errorf("%s does not exist", o.src.Real)
		}
		res, err := patch.Apply(prev.content, *o.change)
		if err != nil {
			return c, err
		}
		c.content, r.Action = res.Content, "modified"
		fill(&r, res)
		if o.src.Real != o.dst.Real {
			if o.dst.Exists || exists(o.dst.Real) {
				return c, fmt.Errorf("cannot rename %s to %s: the destination exists", o.src.Real, o.dst.Real)
			}
			r.Action, r.From = "renamed", o.src.Real
		}
	}
	if exact && r.Fuzz > 0 {
		return c, fmt.Errorf("%s changed since it was read and the patch no longer applies exactly; read it again", o.display)
	}
	if o.change != nil && o.change.NewMode != 0 {
		c.mode = os.FileMode(o.change.NewMode & 0o777)
	}
	c.prev, c.result = prev, r
	return c, nil
}

func fill(r *FileResult, res patch.Result) {
	r.Hunks, r.Added, r.Removed, r.Fuzz = res.Hunks, res.Added, res.Removed, res.Fuzz
	for _, off := range res.Offsets {
		if off != 0 {
			r.Offsets = res.Offsets
			break
		}
	}
}

func exists(real string) bool {
	_, err := os.Lstat(real)
	return err == nil
}

// commit writes every computed change, writes first and deletions last
// (commit.go says how); on a failure everything already done is undone. A
// patch of several steps is journaled so that a crash is undone too.
func commit(plan []computed, journalDir string) error {
	return commitUntil(plan, journalDir, -1)
}

// errCrash is returned by commitUntil when it stops as a crash would.
var errCrash = errors.New("stopped as if the process died")

// commitUntil is commit, stopping dead (no undo, no clean-up: as SIGKILL
// would) at point crash when crash >= 0: before switching step crash, or,
// past the steps, after settling crash-len(steps) of them; for tests.
func commitUntil(plan []computed, journalDir string, crash int) (err error) {
	cache := dirCache{}
	defer cache.close()
	var steps []step
	var made []string
	defer func() {
		for i := range steps {
			if steps[i].file != nil {
				steps[i].file.Close()
			}
		}
	}()
	fail := func(err error) error {
		if _, rerr := settleAll(steps, made, cache, false); rerr != nil {
			return fmt.Errorf("%w; ROLLBACK FAILED, check these files by hand: %v", err, rerr)
		}
		return fmt.Errorf("%w; nothing was changed", err)
	}
	for _, c := range plan {
		if c.content == nil {
			continue
		}
		dir, name := filepath.Dir(c.op.dst.Real), filepath.Base(c.op.dst.Real)
		m, err := mkdirs(dir)
		made = append(made, m...)
		if err != nil {
			return fail(fmt.Errorf("writing %s: %w", c.op.dst.Real, err))
		}
		fd, err := cache.fd(dir)
		if err != nil {
			return fail(fmt.Errorf("writing %s: %w", c.op.dst.Real, err))
		}
		s := step{Op: stepCreate, Dir: dir, Name: name}
		if c.prev != nil && c.op.src.Real == c.op.dst.Real {
			s.Op, s.Old, s.prev = stepReplace, c.prev.ino, c.prev
		}
		steps = append(steps, s)
		if err := steps[len(steps)-1].prepare(fd, c.content, c.mode); err != nil {
			return fail(fmt.Errorf("writing %s: %w", c.op.dst.Real, err))
		}
	}
	for _, c := range plan {
		renamed := c.content != nil && c.op.src.Real != "" && c.op.src.Real != c.op.dst.Real
		if c.content != nil && !renamed {
			continue
		}
		name := filepath.Base(c.op.src.Real)
		tmp, err := tempName(name)
		if err != nil {
			return fail(err)
		}
		steps = append(steps, step{Op: stepDelete, Dir: filepath.Dir(c.op.src.Real), Name: name, Tmp: tmp, Old: c.prev.ino, prev: c.prev})
	}
	if len(steps) > 1 && journalDir != "" {
		jf, jname, jerr := writeJournal(journalDir, &journal{Version: journalVersion, Steps: steps, Dirs: made})
		if jerr != nil {
			return fail(jerr)
		}
		defer func() {
			if err == errCrash {
				jf.Close() // a dead process's lock is released, its journal kept
				return
			}
			removeJournal(journalDir, jf, jname)
		}()
	}
	for i := range steps {
		if i == crash {
			return errCrash
		}
		fd, err := cache.fd(steps[i].Dir)
		if err == nil {
			err = steps[i].apply(fd)
		}
		if err != nil {
			return fail(err)
		}
	}
	// Every file is whole and in place; syncing the folders makes the new
	// names durable. A failure here leaves new, whole files, so it is
	// reported without undoing them.
	serr := cache.syncAll()
	for i := range steps {
		if len(steps)+i == crash {
			return errCrash
		}
		if fd, err := cache.fd(steps[i].Dir); err == nil {
			steps[i].settle(fd, true)
		}
	}
	if serr != nil {
		return fmt.Errorf("the files were changed, but their folders could not be synced to disk: %v", serr)
	}
	return nil
}

func summarize(r ApplyPatchResult) string {
	var b strings.Builder
	if r.DryRun {
		b.WriteString("dry run, nothing written:\n")
	}
	for _, f := range r.Files {
		fmt.Fprintf(&b, "%s %s", f.Action, f.Path)
		if f.From != "" {
			fmt.Fprintf(&b, " (from %s)", f.From)
		}
		fmt.Fprintf(&b, ": %d hunks, +%d -%d", f.Hunks, f.Added, f.Removed)
		if f.Fuzz > 0 {
			fmt.Fprintf(&b, ", fuzz %d", f.Fuzz)
		}
		if len(f.Offsets) > 0 {
			fmt.Fprintf(&b, ", offsets %v", f.Offsets)
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
