package stuck

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/words"
)

// resultWhat is the expression it replaced, on keys and shapes of every
// length around the cuts, with multi-byte runes and invalid UTF-8 at them.
func TestResultWhatIsTheClippedJoin(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", " ", "é", "日", "🧪", "\xff", "\x80", "\xe6\x97", "…"}
	r := rand.New(rand.NewPCG(1, 2))
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	for range 20000 {
		key, shape := text(r.IntN(140)), text(r.IntN(160))
		if r.IntN(4) == 0 {
			shape = text(110 + r.IntN(20)) // around the cut
		}
		for _, failed := range []bool{false, true} {
			want := words.Clip(key, 100) + " → " + words.Clip(errPrefix(failed)+shape, 120)
			if got := resultWhat(key, failed, shape); got != want {
				t.Fatalf("resultWhat(%q, %v, %q) = %q, want %q", key, failed, shape, got, want)
			}
		}
	}
	for _, shape := range []string{"", "\x80\x80\x80" + strings.Repeat("\x80", 200), strings.Repeat("日", 60)} {
		want := words.Clip("k", 100) + " → " + words.Clip("error: "+shape, 120)
		if got := resultWhat("k", true, shape); got != want {
			t.Errorf("resultWhat(k, true, %q) = %q, want %q", shape, got, want)
		}
	}
}
