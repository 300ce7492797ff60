package fstools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// BenchmarkApplyEditSynced is one exact edit of a 2,000-line file, written
// and synced to disk (not a dry run), undone by the next; it reports the
// median besides the mean, since fsync times have a long tail.
func BenchmarkApplyEditSynced(b *testing.B) {
	p, _ := testPolicy(b, `profile = "interactive-dev"`)
	var lines []string
	for i := range 2000 {
		lines = append(lines, "line "+strings.Repeat("x", 30)+" "+string(rune('a'+i%26)))
	}
	lines[1000] = "line 1000: target"
	mustWrite(b, filepath.Join(p.Workspace, "big.txt"), strings.Join(lines, "\n")+"\n")
	tool := NewApplyPatch()
	var args [2]json.RawMessage
	args[0], _ = json.Marshal(ApplyPatchArgs{Edits: []Edit{{Path: "big.txt", OldText: "line 1000: target", NewText: "LINE 1000: TARGET"}}})
	args[1], _ = json.Marshal(ApplyPatchArgs{Edits: []Edit{{Path: "big.txt", OldText: "LINE 1000: TARGET", NewText: "line 1000: target"}}})
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		plan, err := tool.Plan(context.Background(), &toolkit.Env{Policy: p}, args[i%2])
		if err != nil {
			b.Fatal(err)
		}
		if r := plan.Run(context.Background(), toolkit.Grant{}); r.Tool.IsError {
			b.Fatal(resultText(r))
		}
		took = append(took, time.Since(start))
		i++
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "µs-median")
}

// BenchmarkMultiFilePatch is a 20-file patch (each file a one-line change,
// synced), with its journal and without: the journal's cost is one small
// synced write per patch, whatever the number of files.
func BenchmarkMultiFilePatch(b *testing.B) {
	for _, withJournal := range []bool{true, false} {
		name := map[bool]string{true: "journal", false: "no-journal"}[withJournal]
		b.Run(name, func(b *testing.B) {
			p, _ := testPolicy(b, `profile = "interactive-dev"`)
			var fwd, back strings.Builder
			fwd.WriteString("*** Begin Patch\n")
			back.WriteString("*** Begin Patch\n")
			for i := range 20 {
				name := "f" + string(rune('a'+i)) + ".txt"
				mustWrite(b, filepath.Join(p.Workspace, name), strings.Repeat("same line\n", 100)+"old\n")
				fwd.WriteString("*** Update File: " + name + "\n@@\n-old\n+new\n")
				back.WriteString("*** Update File: " + name + "\n@@\n-new\n+old\n")
			}
			fwd.WriteString("*** End Patch\n")
			back.WriteString("*** End Patch\n")
			jdir := ""
			if withJournal {
				jdir = JournalDir(p)
			}
			tool := NewApplyPatch()
			patches := []string{fwd.String(), back.String()}
			var took []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				ops, err := planPatch(p, patches[i%2])
				if err != nil {
					b.Fatal(err)
				}
				if r := tool.run(ops, false, jdir); r.Tool.IsError {
					b.Fatal(resultText(r))
				}
				took = append(took, time.Since(start))
				i++
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "µs-median")
		})
	}
}
