package tui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/fleet"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// row is one task of the fleet view (the shared view model).
type row = fleet.Row

// lineCache is a row as last drawn: the line for its Rev, width and age,
// and the styled line made from it.
type lineCache struct {
	rev       uint64
	line      string
	lineWidth int
	lineAge   string
	// styledFor is the line styledOut (with styledKind) was made from.
	styledFor, styledOut string
	styledKind           int
}

// fleetView is the shared fleet with what the terminal drew of each row.
type fleetView struct {
	*fleet.Fleet
	cache map[*row]*lineCache
}

func newFleet() *fleetView { return &fleetView{Fleet: fleet.New(), cache: map[*row]*lineCache{}} }

// load replaces the fleet (fleet.Fleet.Load) and forgets what was drawn.
func (f *fleetView) load(list []task.Summary, health []api.TaskHealth, rb api.RebaseStatus, reasons map[task.ID]string) {
	f.Load(list, health, rb, reasons)
	clear(f.cache)
}

func (f *fleetView) cached(r *row) *lineCache {
	c := f.cache[r]
	if c == nil {
		c = &lineCache{}
		f.cache[r] = c
	}
	if c.rev != r.Rev {
		*c = lineCache{rev: r.Rev}
	}
	return c
}

// render draws the row at width w; the cache holds unless the row changed
// or the clock moved the age it shows.
func (f *fleetView) render(r *row, w int, now time.Time) string {
	c := f.cached(r)
	age := ""
	if r.Doing != "" {
		age = " " + shortAge(now.Sub(r.Since))
	}
	if c.line != "" && c.lineWidth == w && c.lineAge == age {
		return c.line
	}
	mark := " "
	if r.Attention != "" {
		mark = "!"
	}
	doing := r.Doing
	if doing != "" {
		doing += age
	}
	cost := fmt.Sprintf("$%.2f", r.Sum.Usage.CostUSD)
	behind := ""
	if r.Behind > 0 {
		behind = fmt.Sprintf("↓%d", r.Behind)
	}
	var s string
	if w >= 120 {
		s = fmt.Sprintf("%s %-8s %-9s %-7s %-10s %-10s %-16s %7s %7s %-4s %s", mark, r.Sum.ID, r.Sum.Status,
			clip(r.Sum.Engine, 7), clip(r.Sum.Persona, 10), clip(r.Health, 10), clip(words.Printable(doing), 16),
			shortTokens(r.Tokens), cost, behind, words.Printable(or(r.Attention, r.Sum.Description)))
	} else {
		s = fmt.Sprintf("%s %-8s %-8s %-9s %-12s %6s %-3s %s", mark, r.Sum.ID, clip(string(r.Sum.Status), 8),
			clip(r.Health, 9), clip(words.Printable(doing), 12), cost, behind, words.Printable(or(r.Attention, r.Sum.Description)))
	}
	s = ansi.Truncate(s, w, "…")
	c.line, c.lineWidth, c.lineAge = s, w, age
	return s
}

func fleetHeader(w int) string {
	if w >= 120 {
		return ansi.Truncate(fmt.Sprintf("  %-8s %-9s %-7s %-10s %-10s %-16s %7s %7s %-4s %s", "ID", "STATUS", "ENGINE", "PERSONA", "HEALTH", "DOING", "TOKENS", "COST", "BHND", "ATTENTION / TASK"), w, "")
	}
	return ansi.Truncate(fmt.Sprintf("  %-8s %-8s %-9s %-12s %6s %-3s %s", "ID", "STATUS", "HEALTH", "DOING", "COST", "BH", "ATTENTION / TASK"), w, "")
}

func clip(s string, n int) string { return ansi.Truncate(s, n, "…") }

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func shortAge(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh", int(d.Hours()))
}

func shortTokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func first(a, _ bool) bool { return a }
