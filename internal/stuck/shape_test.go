package stuck

import (
	"math/rand/v2"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// checkShape holds resultShape to what it replaced: the joined text, then
// the mask, then words.OneLine.
func checkShape(t *testing.T, preview, tail string) {
	t.Helper()
	body := wholeWords(preview, tail)
	if got, want := resultShape(preview, tail, false), MaskResult(body); got != want {
		t.Errorf("resultShape(%q, %q, ok) = %q, MaskResult gives %q", preview, tail, got, want)
	}
	if got, want := resultShape(preview, tail, true), Mask(body); got != want {
		t.Errorf("resultShape(%q, %q, failed) = %q, Mask gives %q", preview, tail, got, want)
	}
	if got, want := maskDurationsTo(body, true), words.OneLine(maskDurations(body)); got != want {
		t.Errorf("maskDurationsTo(%q, line) = %q, want %q", body, got, want)
	}
}

// shapeCases are the mask inputs cut as results are: whole, as a preview and
// a tail of themselves, and split in two at every eighth byte.
func shapeCases(s string, f func(preview, tail string)) {
	f(s, "")
	f(event.ResultPreview(s+s), event.ResultTail(s+s))
	for i := 0; i <= len(s); i += 8 {
		f(s[:i], s[i:])
		f(s[:i]+"…", "…"+s[i:])
	}
}

func TestResultShapeEqualsMaskingTheJoinedText(t *testing.T) {
	t.Parallel()
	for _, s := range maskInputs(t) {
		shapeCases(s, func(p, tl string) { checkShape(t, p, tl) })
		if t.Failed() {
			return
		}
	}
	r := rand.New(rand.NewPCG(11, 26))
	for range 20000 {
		checkShape(t, randomMaskText(r), randomMaskText(r))
		checkShape(t, randomMaskText(r)+"…", "…"+randomMaskText(r))
		if t.Failed() {
			return
		}
	}
}

func FuzzResultShape(f *testing.F) {
	for _, s := range maskInputs(f) {
		if len(s) < 300 {
			f.Add(s, "")
			f.Add(s+"…", "…"+s)
		}
	}
	f.Fuzz(checkShape)
}
