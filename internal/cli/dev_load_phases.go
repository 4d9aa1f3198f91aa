package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The phases of a load task, read from the daemon's event log (never
// estimated): from its release (task.status to queued) to its worktree and
// its persona (the later of worktree.created and persona.selected: waiting
// for a slot, then the router's call and the provisioning, side by side),
// from there to the agent's end (agent.completed: the agent loop's turns),
// and from there to landed (task.status to completed: the commit, the merge
// queue and the landing). The three add up to the task's whole time.

// phaseKinds are the event kinds the phases are read from.
var phaseKinds = []string{string(event.KindTaskStatus), string(event.KindWorktreeCreated),
	string(event.KindPersonaSelected), string(event.KindTurnStarted), string(event.KindCompleted)}

// distribution summarizes one figure over the tasks.
type distribution struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// loadPhases is what the event log says about the load's tasks. Phases are
// in seconds, the overhead in milliseconds.
type loadPhases struct {
	// Tasks is how many tasks had every phase in the log.
	Tasks        int          `json:"tasks"`
	WorktreeWait distribution `json:"worktree_wait_seconds"`
	AgentWork    distribution `json:"agent_work_seconds"`
	LandWait     distribution `json:"land_wait_seconds"`
	Total        distribution `json:"release_to_landed_seconds"`
	// OverheadPerCall is each task's agent work less its model's latency,
	// per model call: the loop, its tools, checkpoints and events.
	OverheadPerCall distribution `json:"overhead_per_call_ms"`
	// InLoopPeak and InLoopMean count the tasks inside the agent loop (first
	// turn started, agent not yet completed) at once: the most, and the
	// mean over the time from the first release to the last landing.
	InLoopPeak int     `json:"in_agent_loop_peak"`
	InLoopMean float64 `json:"in_agent_loop_mean"`
}

// taskTimeline is when each phase of one task began or ended.
type taskTimeline struct {
	released, worktree, persona, loop, done, landed time.Time
	turns                                           int
}

// readPhases reads the log's events of the given tasks and measures their
// phases; latency is the scripted model's per call.
func readPhases(ctx context.Context, c *client.Client, ids []task.ID, latency time.Duration) (*loadPhases, error) {
	want := make(map[task.ID]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	const page = 5000
	var evs []event.Event
	for after := int64(0); ; {
		got, err := c.Events(ctx, event.Query{Filter: event.Filter{Kinds: phaseKinds}, AfterID: after, Limit: page})
		if err != nil {
			return nil, fmt.Errorf("reading the event log for the phases: %w", err)
		}
		for _, e := range got {
			if want[e.TaskID] {
				evs = append(evs, e)
			}
		}
		if len(got) < page {
			break
		}
		after = got[len(got)-1].ID
	}
	ph := phasesOf(evs, latency)
	return &ph, nil
}

// phasesOf measures the phases of the tasks whose events evs are (in log
// order).
func phasesOf(evs []event.Event, latency time.Duration) loadPhases {
	lines := map[task.ID]*taskTimeline{}
	var order []task.ID
	for _, e := range evs {
		tl := lines[e.TaskID]
		if tl == nil {
			tl = &taskTimeline{}
			lines[e.TaskID] = tl
			order = append(order, e.TaskID)
		}
		first := func(t *time.Time) {
			if t.IsZero() {
				*t = e.Time
			}
		}
		switch p := e.Payload.(type) {
		case event.TaskStatus:
			switch p.To {
			case task.Queued:
				first(&tl.released)
			case task.Completed:
				first(&tl.landed)
			}
		case event.WorktreeCreated:
			first(&tl.worktree)
		case event.PersonaSelected:
			first(&tl.persona)
		case event.TurnStarted:
			first(&tl.loop)
			tl.turns++
		case event.Completed:
			first(&tl.done)
		}
	}
	var (
		wt, agent, land, total, over []float64
		edges                        []loopEdge
		start, end                   time.Time
	)
	for _, id := range order {
		tl := lines[id]
		if tl.released.IsZero() || tl.worktree.IsZero() || tl.loop.IsZero() || tl.done.IsZero() || tl.landed.IsZero() {
			continue
		}
		if tl.persona.After(tl.worktree) {
			tl.worktree = tl.persona // the agent starts once it has both
		}
		wt = append(wt, tl.worktree.Sub(tl.released).Seconds())
		agent = append(agent, tl.done.Sub(tl.worktree).Seconds())
		land = append(land, tl.landed.Sub(tl.done).Seconds())
		total = append(total, tl.landed.Sub(tl.released).Seconds())
		if tl.turns > 0 {
			work := tl.done.Sub(tl.worktree) - time.Duration(tl.turns)*latency
			over = append(over, float64(work.Microseconds())/1000/float64(tl.turns))
		}
		edges = append(edges, loopEdge{tl.loop, 1}, loopEdge{tl.done, -1})
		if start.IsZero() || tl.released.Before(start) {
			start = tl.released
		}
		if tl.landed.After(end) {
			end = tl.landed
		}
	}
	ph := loadPhases{Tasks: len(total), WorktreeWait: distributionOf(wt), AgentWork: distributionOf(agent),
		LandWait: distributionOf(land), Total: distributionOf(total), OverheadPerCall: distributionOf(over)}
	ph.InLoopPeak, ph.InLoopMean = concurrency(edges, start, end)
	return ph
}

// loopEdge is a task entering (+1) or leaving (-1) the agent loop.
type loopEdge struct {
	at    time.Time
	delta int
}

// concurrency returns the most edges open at once and their mean over
// [start, end]. At equal times a leaving counts before an entering.
func concurrency(edges []loopEdge, start, end time.Time) (peak int, mean float64) {
	slices.SortFunc(edges, func(a, b loopEdge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	var (
		n    int
		area float64 // task-seconds inside the loop
		prev time.Time
	)
	for _, e := range edges {
		if n > 0 {
			area += float64(n) * e.at.Sub(prev).Seconds()
		}
		n += e.delta
		peak = max(peak, n)
		prev = e.at
	}
	if span := end.Sub(start).Seconds(); span > 0 {
		mean = area / span
	}
	return peak, mean
}

// distributionOf returns the nearest-rank percentiles of xs.
func distributionOf(xs []float64) distribution {
	if len(xs) == 0 {
		return distribution{}
	}
	s := slices.Sorted(slices.Values(xs))
	at := func(p float64) float64 { return s[max(0, int(math.Ceil(p*float64(len(s))))-1)] }
	var sum float64
	for _, x := range s {
		sum += x
	}
	return distribution{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: s[len(s)-1], Mean: sum / float64(len(s))}
}

func writeLoadPhases(out io.Writer, ph *loadPhases, turns int) {
	fmt.Fprintf(out, "\nPhases of the %d tasks, from the event log:\n\n", ph.Tasks)
	tw := newTable(out)
	fmt.Fprintln(tw, "  \tp50\tp90\tp99\tmax\tmean")
	row := func(name string, d distribution, unit string, format string) {
		f := func(x float64) string { return fmt.Sprintf(format, x) + " " + unit }
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", name, f(d.P50), f(d.P90), f(d.P99), f(d.Max), f(d.Mean))
	}
	row("worktree and persona", ph.WorktreeWait, "s", "%.2f")
	row("agent work", ph.AgentWork, "s", "%.2f")
	row("waiting to land", ph.LandWait, "s", "%.2f")
	row("release to landed", ph.Total, "s", "%.2f")
	row(fmt.Sprintf("overhead per model call (%d calls)", turns), ph.OverheadPerCall, "ms", "%.1f")
	tw.Flush()
	fmt.Fprintf(out, "\nin the agent loop at once: %d at most, %.1f on average (release to last landing)\n", ph.InLoopPeak, ph.InLoopMean)
}
