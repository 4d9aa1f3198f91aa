package stuck

import "testing"

// TestCorpusScore logs the corpus's score: stuck streams caught in time
// (any actionable finding at or before the pattern's count), late or
// missed; healthy streams flagged.
func TestCorpusScore(t *testing.T) {
	t.Parallel()
	inTime, late, missed, flagged, healthy := 0, 0, 0, 0, 0
	for _, c := range append(stuckCases(), newPatterns()...) {
		s := newStream("t-score")
		c.build(s)
		hs := run(s, Config{}, true)
		at := -1
		for _, h := range hs {
			if (!h.f.Tier2Only || h.f.Confirm || c.tier2) && h.occ > 0 {
				at = h.occ
				break
			}
		}
		switch {
		case at < 0:
			missed++
			t.Logf("missed: %s", c.name)
		case at <= c.want:
			inTime++
		default:
			late++
			t.Logf("late: %s (%d of %d)", c.name, at, c.want)
		}
	}
	for _, c := range append(healthyCases(), healthyTraps()...) {
		healthy++
		s := newStream("t-score")
		c.build(s)
		if len(actionable(run(s, Config{}, true))) > 0 {
			flagged++
			t.Logf("flagged: %s", c.name)
		}
	}
	t.Logf("stuck: %d in time, %d late, %d missed; healthy: %d of %d flagged", inTime, late, missed, flagged, healthy)
}
