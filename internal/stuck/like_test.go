package stuck

import "testing"

// Each result records which results before it are the same when it
// arrives; the checks read that record instead of comparing again. Over
// the benchmark mix, and over a window longer than the record, the record
// answers as the comparison would.
func TestSameRecordEqualsComparison(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{{}, {Window: 150}} {
		d := New(cfg, testRoot, t0)
		pairs := 0
		for _, e := range append(benchMix(), benchMix()...) {
			d.Observe(e)
			res := d.results()
			for j := range res {
				for i := range j {
					if got, want := d.sameAt(res, i, j), d.same(&res[i], &res[j]); got != want {
						t.Fatalf("window %d: results %d and %d: recorded same %v, compared %v", cfg.Window, res[i].N, res[j].N, got, want)
					}
					if j-i-1 < res[j].likeN {
						pairs++
					}
				}
			}
		}
		if pairs == 0 {
			t.Fatalf("window %d: no pair answered from the record", cfg.Window)
		}
	}
}
