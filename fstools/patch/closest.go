package patch

import (
	"slices"
)

// Bounds that keep the closest-text search cheap on large files.
const (
	closestCellBudget = 4_000_000 // window × line comparisons
	closestLineSpan   = 50_000    // lines scanned for the most similar single line
	closestScoreLines = 50        // lines scored per candidate window
)

// closest finds the window of len(want) lines in d most similar to want,
// preferring windows near line near (0-based). It returns the window's
// 0-based start and a similarity in [0,1], or -1 when the file or want is
// empty. Two candidates are scored by bigram similarity: the window where
// most of want's (whitespace-normalized) lines occur verbatim, weighted by
// length, and the window aligned on the line most similar to want's longest
// line.
func closest(d *doc, want []string, near int) (int, float64) {
	n, m := len(d.lines), len(want)
	if n == 0 || m == 0 {
		return -1, 0
	}
	fl := d.normalized(FuzzSpace)
	w := make([]string, m)
	longest := 0
	for j, s := range want {
		w[j] = normalize(s, FuzzSpace)
		if len(w[j]) > len(w[longest]) {
			longest = j
		}
	}
	windows := max(1, n-m+1)
	near = min(max(near, 0), windows-1)
	lo, hi := 0, windows-1
	if windows*m > closestCellBudget {
		half := closestCellBudget / m / 2
		lo, hi = max(0, near-half), min(windows-1, near+half)
	}
	var cands []int
	best, bestScore := -1, 0
	for s := lo; s <= hi; s++ {
		score := 0
		for j := 0; j < m && s+j < n; j++ {
			if w[j] != "" && fl[s+j] == w[j] {
				score += len(w[j])
			}
		}
		if score > bestScore || (score == bestScore && score > 0 && abs(s-near) < abs(best-near)) {
			best, bestScore = s, score
		}
	}
	if best >= 0 {
		cands = append(cands, best)
	}
	if w[longest] != "" {
		target := bigrams(w[longest], nil)
		var buf []uint16
		bestLine, bestSim := -1, 0.0
		for i := max(0, near-closestLineSpan/2); i < min(n, near+closestLineSpan/2); i++ {
			buf = bigrams(fl[i], buf[:0])
			if sim := dice(target, buf); sim > bestSim || (sim == bestSim && sim > 0 && abs(i-near) < abs(bestLine-near)) {
				bestLine, bestSim = i, sim
			}
		}
		if bestLine >= 0 {
			cands = append(cands, min(max(bestLine-longest, 0), windows-1))
		}
	}
	start, sim := -1, 0.0
	for _, s := range cands {
		if v := windowSimilarity(fl, w, s); start < 0 || v > sim {
			start, sim = s, v
		}
	}
	return start, sim
}

// windowSimilarity is the mean bigram similarity of want's first lines to the
// lines at start.
func windowSimilarity(lines, want []string, start int) float64 {
	total, count := 0.0, 0
	var a, b []uint16
	for j := 0; j < len(want) && j < closestScoreLines; j++ {
		count++
		if start+j >= len(lines) {
			continue
		}
		if want[j] == lines[start+j] {
			total++
			continue
		}
		a, b = bigrams(want[j], a[:0]), bigrams(lines[start+j], b[:0])
		total += dice(a, b)
	}
	return total / float64(count)
}

// bigrams appends the sorted byte pairs of s (s itself, if shorter) to buf.
func bigrams(s string, buf []uint16) []uint16 {
	if len(s) == 1 {
		return append(buf, uint16(s[0]))
	}
	for i := 0; i+1 < len(s); i++ {
		buf = append(buf, uint16(s[i])<<8|uint16(s[i+1]))
	}
	slices.Sort(buf)
	return buf
}

// dice is the Sørensen–Dice coefficient of two sorted bigram multisets.
func dice(a, b []uint16) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
