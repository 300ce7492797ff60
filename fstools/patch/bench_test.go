package patch

import (
	"fmt"
	"strings"
	"testing"
)

// benchFile returns a file of n lines of about 60 bytes and a patch that
// changes it in hunks places, evenly spread.
func benchFile(lines, hunks int) (orig, patch string) {
	var o, p strings.Builder
	fmt.Fprintf(&p, "--- a/f\n+++ b/f\n")
	step := lines / hunks
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&o, "\tvalue%06d := compute(%6d, \"some text to make the line long\")\n", i, i)
	}
	all := strings.SplitAfter(o.String(), "\n")
	for h := 0; h < hunks; h++ {
		at := h*step + step/2 // 0-based changed line, 3 lines of context
		fmt.Fprintf(&p, "@@ -%d,7 +%d,7 @@\n", at-2, at-2+0)
		for k := at - 3; k <= at+3; k++ {
			line := strings.TrimSuffix(all[k], "\n")
			if k == at {
				fmt.Fprintf(&p, "-%s\n+%s // changed\n", line, line)
			} else {
				fmt.Fprintf(&p, " %s\n", line)
			}
		}
	}
	return o.String(), p.String()
}

func BenchmarkApply(b *testing.B) {
	orig, p := benchFile(2000, 10)
	fcs, err := Parse(p)
	if err != nil {
		b.Fatal(err)
	}
	data := []byte(orig)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Apply(data, fcs[0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	_, p := benchFile(2000, 10)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseApplyScaling is the series for "a 1 MiB file with 1,000
// hunks": time should grow linearly with the file and the hunks.
func BenchmarkParseApplyScaling(b *testing.B) {
	for _, size := range []struct{ lines, hunks int }{
		{4_000, 250}, {8_000, 500}, {16_000, 1_000}, {32_000, 2_000}, {16_000, 100}, {16_000, 2_000},
	} {
		orig, p := benchFile(size.lines, size.hunks)
		data := []byte(orig)
		b.Run(fmt.Sprintf("%dKiB-%dhunks", len(orig)>>10, size.hunks), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				fcs, err := Parse(p)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Apply(data, fcs[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkApplyEdit(b *testing.B) {
	orig, _ := benchFile(2000, 10)
	data := []byte(orig)
	old := "\tvalue001000 := compute(  1000, \"some text to make the line long\")\n"
	for b.Loop() {
		if _, _, err := ApplyEdit(data, old, "\tchanged := 1\n", false); err != nil {
			b.Fatal(err)
		}
	}
}
