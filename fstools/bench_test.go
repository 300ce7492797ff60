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
		if r := plan.Run(context.Background()); r.Tool.IsError {
			b.Fatal(resultText(r))
		}
		took = append(took, time.Since(start))
		i++
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "µs-median")
}
