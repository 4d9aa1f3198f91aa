package stuck

import (
	"fmt"
	"strings"
	"testing"
)

// TestCorpusScore scores the corpus: stuck streams caught in time (any
// actionable finding at or before the pattern's count), late or missed;
// healthy streams flagged. It logs the table and fails unless every stuck
// stream is caught in time and no healthy one is flagged.
func TestCorpusScore(t *testing.T) {
	t.Parallel()
	inTime, late, missed, flagged, healthy := 0, 0, 0, 0, 0
	var rows []string
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
		verdict := "in time"
		switch {
		case at < 0:
			missed++
			verdict = "MISSED"
		case at <= c.want:
			inTime++
		default:
			late++
			verdict = "LATE"
		}
		rows = append(rows, fmt.Sprintf("stuck    %-76s %3d of %-3d %s", c.name, max(at, 0), c.want, verdict))
	}
	for _, c := range append(healthyCases(), healthyTraps()...) {
		healthy++
		s := newStream("t-score")
		c.build(s)
		verdict := "not flagged"
		if len(actionable(run(s, Config{}, true))) > 0 {
			flagged++
			verdict = "FLAGGED"
		}
		rows = append(rows, fmt.Sprintf("healthy  %-76s %s", c.name, verdict))
	}
	t.Logf("corpus:\n%s", strings.Join(rows, "\n"))
	t.Logf("stuck: %d in time, %d late, %d missed; healthy: %d of %d flagged", inTime, late, missed, flagged, healthy)
	if late+missed > 0 || flagged > 0 {
		t.Errorf("want every stuck stream caught in time and no healthy one flagged")
	}
}
