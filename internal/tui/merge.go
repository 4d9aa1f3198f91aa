package tui

import (
	"fmt"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

type mergeLine api.MergeEntry

func mergeLines(es []api.MergeEntry) []mergeLine {
	out := make([]mergeLine, len(es))
	for i, e := range es {
		out[i] = mergeLine(e)
	}
	return out
}

func (e mergeLine) String() string {
	s := fmt.Sprintf("  #%-4d %-8s %-10s → %-8s tries %d", e.ID, e.TaskID, e.State, words.Printable(e.Target), e.Attempts)
	if e.Detail != "" {
		s += "  " + words.Printable(words.OneLine(e.Detail))
	}
	return s
}
