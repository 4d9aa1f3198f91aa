package overlap

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// Range is a span of lines of the pair's merge base, From to To
// inclusive. Lines inserted between lines n and n+1 (changing none) are
// the empty range From n+1 To n.
type Range struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// FileLines is where the two sides of a pair changed one shared file, in
// lines of their merge base; Intersect says whether a range of one
// touches a range of the other (git merge conflicts only where they do).
type FileLines struct {
	File      string  `json:"file"`
	A         []Range `json:"a"`
	B         []Range `json:"b"`
	Intersect bool    `json:"intersect"`
}

// maxDiff bounds the diff read for line ranges; past it, the ranges of
// the files it did not reach are not known.
const maxDiff = 4 << 20

// changedLines returns, per file of files, the lines of base that tip
// changed (`git diff -U0`, hunk headers only).
func changedLines(ctx context.Context, dir, base, tip string, files []string) (map[string][]Range, error) {
	args := append([]string{"-c", "core.quotePath=false", "diff", "-U0", "--no-color", "--no-renames", "--no-ext-diff", base, tip, "--"}, files...)
	out, err := git.Run(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	if len(out) > maxDiff {
		out = out[:maxDiff]
	}
	got := map[string][]Range{}
	file := ""
	for line := range strings.SplitSeq(out, "\n") {
		switch {
		case strings.HasPrefix(line, "diff --git "):
			file = ""
		case strings.HasPrefix(line, "--- a/"):
			file = strings.TrimPrefix(line, "--- a/")
		case strings.HasPrefix(line, "+++ b/") && file == "":
			file = strings.TrimPrefix(line, "+++ b/") // a new file
		case strings.HasPrefix(line, "@@ -") && file != "":
			if r, ok := hunkRange(line); ok {
				got[file] = append(got[file], r)
			}
		}
	}
	return got, nil
}

// hunkRange reads the base side of a hunk header "@@ -s[,n] +… @@".
func hunkRange(h string) (Range, bool) {
	old, _, ok := strings.Cut(strings.TrimPrefix(h, "@@ -"), " ")
	if !ok {
		return Range{}, false
	}
	s, n := old, "1"
	if i := strings.IndexByte(old, ','); i >= 0 {
		s, n = old[:i], old[i+1:]
	}
	start, err1 := strconv.Atoi(s)
	count, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil {
		return Range{}, false
	}
	if count == 0 {
		return Range{From: start + 1, To: start}, true // inserted after line start
	}
	return Range{From: start, To: start + count - 1}, true
}

// touches reports whether a range of a intersects or adjoins one of b:
// whether no unchanged line of the base lies between them, which is when
// git's merge conflicts.
func touches(a, b []Range) bool {
	for _, x := range a {
		for _, y := range b {
			if x.From <= y.To+1 && y.From <= x.To+1 {
				return true
			}
		}
	}
	return false
}

// pairLines is FileLines for each of files both sides changed since base.
func pairLines(ctx context.Context, dir, base, ca, cb string, files []string) []FileLines {
	if len(files) == 0 {
		return nil
	}
	la, err := changedLines(ctx, dir, base, ca, files)
	if err != nil {
		return nil
	}
	lb, err := changedLines(ctx, dir, base, cb, files)
	if err != nil {
		return nil
	}
	var out []FileLines
	for _, f := range slices.Sorted(slices.Values(files)) {
		a, b := la[f], lb[f]
		if len(a) == 0 || len(b) == 0 {
			continue // one side's change of it was put back
		}
		out = append(out, FileLines{File: f, A: a, B: b, Intersect: touches(a, b)})
	}
	return out
}

// maxNoteFiles bounds the files LinesNote names.
const maxNoteFiles = 5

// LinesNote is the lines part of a notice: for each shared file, the
// lines of the merge base the told task changed and those the other did,
// and whether they meet. mineIsA says the told task is side A. "" when
// no line ranges are known.
func LinesNote(ls []FileLines, mineIsA bool) string {
	if len(ls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Where (lines of your common base):\n")
	for i, l := range ls {
		if i == maxNoteFiles {
			fmt.Fprintf(&b, "  … and %d more files\n", len(ls)-i)
			break
		}
		mine, its := l.A, l.B
		if !mineIsA {
			mine, its = its, mine
		}
		state := "apart"
		if l.Intersect {
			state = "the same or adjacent lines"
		}
		fmt.Fprintf(&b, "  %s: you %s, it %s (%s)\n", l.File, rangesText(mine), rangesText(its), state)
	}
	return b.String()
}

// maxNoteRanges bounds the ranges LinesNote names per side and file.
const maxNoteRanges = 6

func rangesText(rs []Range) string {
	var s []string
	for i, r := range rs {
		switch {
		case i == maxNoteRanges:
			s = append(s, fmt.Sprintf("+%d more", len(rs)-i))
		case r.From == r.To+1:
			s = append(s, fmt.Sprintf("inserted after %d", r.To))
		case r.From == r.To:
			s = append(s, fmt.Sprintf("line %d", r.From))
		default:
			s = append(s, fmt.Sprintf("lines %d-%d", r.From, r.To))
		}
		if i == maxNoteRanges {
			break
		}
	}
	return strings.Join(s, ", ")
}
