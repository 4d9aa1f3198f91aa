package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

type eventsOpts struct {
	task   string
	kinds  []string
	since  string
	after  int64
	limit  int
	follow bool
	json   bool
}

func (a *app) newEventsCmd() *cobra.Command {
	var opts eventsOpts
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print the event log, optionally following it live",
		Long: `Print logged events, oldest first. --kind takes a kind or a dotted prefix
(task, task.status). --since takes a duration back from now (10m, 2h, 7d), an
RFC 3339 time or a date. --follow keeps printing events as they happen, streamed
model text inline as it arrives; with --json it prints one JSON object per
line.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runEvents(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.StringVar(&opts.task, "task", "", "only this task's events")
	f.StringSliceVar(&opts.kinds, "kind", nil, "only these kinds or kind prefixes (comma-separated)")
	f.StringVar(&opts.since, "since", "", "only events since T: 10m, 2h, 7d, 2026-11-21 or 2026-11-21T09:00:00Z")
	f.Int64Var(&opts.after, "after", 0, "only events with an id above this one")
	f.IntVar(&opts.limit, "limit", 1000, "print at most this many logged events (without --follow)")
	f.BoolVarP(&opts.follow, "follow", "f", false, "keep printing new events until interrupted")
	f.BoolVar(&opts.json, "json", false, "print JSON (an array; with --follow one object per line)")
	return cmd
}

const sinceHint = "e.g. --since 10m, --since 7d, --since 2026-11-21"

// parseSince reads a --since value relative to now: a duration back from now
// (10m, 2h, or in days: 7d), an RFC 3339 time or a local date and time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil {
			if n < 0 {
				return time.Time{}, &usageError{msg: fmt.Sprintf("--since %q: a duration back from now must be positive", s), hint: sinceHint}
			}
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, &usageError{msg: fmt.Sprintf("--since %q: a duration back from now must be positive", s), hint: sinceHint}
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, &usageError{msg: fmt.Sprintf("--since %q is not a duration, time or date", s), hint: sinceHint}
}

// checkKinds rejects a --kind that matches no kind this build logs, listing
// the kinds.
func checkKinds(kinds []string) error {
	for _, k := range kinds {
		if event.KnownFilter(k) {
			continue
		}
		names := make([]string, 0, len(event.Kinds()))
		for _, k := range event.Kinds() {
			names = append(names, string(k))
		}
		return &usageError{
			msg:  fmt.Sprintf("--kind %q matches no event kind; the kinds are: %s", k, strings.Join(names, ", ")),
			hint: "a kind or a dotted prefix, e.g. --kind task.status or --kind merge",
		}
	}
	return nil
}

func (a *app) runEvents(ctx context.Context, opts eventsOpts, out io.Writer) error {
	q := event.Query{AfterID: opts.after, Limit: opts.limit}
	q.Kinds = opts.kinds
	if opts.after < 0 {
		return usageErrorf("--after must not be negative")
	}
	if opts.limit < 0 {
		return usageErrorf("--limit must not be negative")
	}
	if err := checkKinds(opts.kinds); err != nil {
		return err
	}
	if opts.since != "" {
		t, err := parseSince(opts.since, time.Now())
		if err != nil {
			return err
		}
		q.Since = t
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	if opts.task != "" {
		d, err := c.GetTask(ctx, opts.task)
		if err != nil {
			return err
		}
		q.TaskID = d.Task.ID
	}
	if !opts.follow {
		evs, err := c.Events(ctx, q)
		if err != nil {
			return err
		}
		if opts.json {
			if evs == nil {
				evs = []event.Event{}
			}
			return writeJSON(out, evs)
		}
		for _, e := range evs {
			writeTimelineEvent(out, e, time.Local)
		}
		if opts.limit > 0 && len(evs) == opts.limit {
			fmt.Fprintf(out, "(limit reached: --after %d shows more)\n", evs[len(evs)-1].ID)
		}
		return nil
	}
	q.Limit = 0
	emit := jsonLines(out)
	if !opts.json {
		emit = newLiveWriter(out, time.Local, false).Print
	}
	return follow(ctx, c, q, emit, nil)
}

// follow passes events from a watch stream to emit until ctx ends, the
// stream ends, or stop returns true for an event (printed first).
func follow(ctx context.Context, c *client.Client, q event.Query, emit func(event.Event) error, stop func(event.Event) bool) error {
	s, err := c.Watch(ctx, q)
	if err != nil {
		return err
	}
	defer s.Close()
	for {
		e, err := s.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("following events: %w", err)
		}
		if err := emit(e); err != nil {
			return err
		}
		if stop != nil && stop(e) {
			return nil
		}
	}
}

// jsonLines prints each event as one JSON object per line (NDJSON), around
// the terminal escaping.
func jsonLines(out io.Writer) func(event.Event) error {
	enc := json.NewEncoder(jsonOut(out))
	return func(e event.Event) error { return enc.Encode(e) }
}

// liveWriter renders events as they happen. Streamed text (agent.text.delta)
// is written as it comes, inline; everything else ends that text's line
// first. Without transcript every other event is one log line, as `events`
// prints them; with it (attach, one task) the agent's observations read as
// the run itself: turn headers, the text, tool calls and their results,
// costs, questions and the end. It is for one goroutine.
type liveWriter struct {
	out        io.Writer
	loc        *time.Location
	transcript bool

	open     turnKey                      // the turn whose streamed text is being written; zero: none
	midLine  bool                         // the last write did not end its line
	streamed map[turnKey]*strings.Builder // text streamed per turn, until its agent.text
	calls    map[turnKey]int              // tool calls seen per turn, until the turn ends
}

// turnKey names one turn of one task.
type turnKey struct {
	task task.ID
	turn int
}

func newLiveWriter(out io.Writer, loc *time.Location, transcript bool) *liveWriter {
	return &liveWriter{out: out, loc: loc, transcript: transcript, streamed: map[turnKey]*strings.Builder{}, calls: map[turnKey]int{}}
}

// Print renders one event.
func (w *liveWriter) Print(e event.Event) error {
	if d, ok := e.Payload.(event.TextDelta); ok {
		w.delta(e, d)
		return nil
	}
	w.endLine()
	w.open = turnKey{}
	if w.transcript {
		w.observation(e)
	} else {
		writeTimelineEvent(w.out, e, w.loc)
	}
	switch p := e.Payload.(type) {
	case event.Text:
		delete(w.streamed, turnKey{e.TaskID, p.Turn})
	case event.ToolCall:
		w.calls[turnKey{e.TaskID, p.Turn}]++
	case event.TurnEnded:
		delete(w.calls, turnKey{e.TaskID, p.Turn})
	}
	return nil
}

// endLine ends a line of streamed text.
func (w *liveWriter) endLine() {
	if w.midLine {
		fmt.Fprintln(w.out)
		w.midLine = false
	}
}

func (w *liveWriter) delta(e event.Event, d event.TextDelta) {
	k := turnKey{e.TaskID, d.Turn}
	if d.Reset {
		w.endLine()
		w.open = turnKey{}
		if w.streamed[k] == nil {
			return // nothing was shown to take back
		}
		if w.transcript {
			fmt.Fprintln(w.out, "⟲ the model call was retried; the text above is discarded")
		} else {
			writeEventLine(w.out, e, w.loc)
		}
		delete(w.streamed, k)
		return
	}
	if d.Text == "" {
		return
	}
	if w.open != k {
		w.endLine()
		if !w.transcript {
			fmt.Fprint(w.out, eventPrefix(e, w.loc))
		}
		w.open = k
	}
	fmt.Fprint(w.out, d.Text)
	w.midLine = !strings.HasSuffix(d.Text, "\n")
	if w.streamed[k] == nil {
		w.streamed[k] = &strings.Builder{}
	}
	w.streamed[k].WriteString(d.Text)
}

// observation renders one event of a transcript.
func (w *liveWriter) observation(e event.Event) {
	out := w.out
	switch p := e.Payload.(type) {
	case event.TurnStarted:
		head := append([]string{fmt.Sprintf("turn %d", p.Turn)}, nonEmpty(p.Model, e.Time.In(w.loc).Format("15:04:05"))...)
		if p.Resumed {
			head = append(head, "resumed")
		}
		fmt.Fprintf(out, "── %s ──\n", strings.Join(head, " · "))
	case event.TurnEnded:
		fmt.Fprintf(out, "· turn %d ended: %s\n", p.Turn, turnEnd(p))
	case event.Text:
		// The text was shown as it streamed, unless this watcher fell behind
		// and deltas were dropped for it: then it is shown again in full.
		streamed := w.streamed[turnKey{e.TaskID, p.Turn}]
		switch {
		case streamed == nil:
			writeBlock(out, "", "", p.Text, 0, 0)
		case strings.TrimSpace(streamed.String()) != strings.TrimSpace(p.Text):
			fmt.Fprintln(out, "⟲ some streamed text was missed; the turn's text in full:")
			writeBlock(out, "", "", p.Text, 0, 0)
		}
	case event.ToolCall:
		fmt.Fprintf(out, "→ %s %s\n", p.Name, compactArgs(p.Args, argsWidth))
	case event.ToolResult:
		name := ""
		if w.calls[turnKey{e.TaskID, p.Turn}] > 1 {
			name = p.Name + " " // several calls in flight: say which one answered
		}
		fmt.Fprintf(out, "← %s%s\n", name, toolOutcome(p.Error, p.Size, p.DurationMs))
		if p.Preview != "" {
			writeBlock(out, resultIndent, resultIndent, p.Preview, resultLines, resultWidth)
		}
	case event.Usage:
		fmt.Fprintf(out, "· %s\n", usageLine(p))
	case event.FileChanged:
		fmt.Fprintf(out, "✎ %s\n", fileChange(p))
	case event.NeedsInput:
		writeBlock(out, "? ", "  ", p.Question, 0, 0)
		fmt.Fprintln(out, "  (the task waits for your answer: type it and press Enter)")
	case event.Completed:
		writeBlock(out, "✓ completed: ", "  ", p.Summary, 0, 0)
	case event.Failed:
		writeBlock(out, "✗ failed: ", "  ", p.Reason, 0, 0)
	case event.Delivered:
		fmt.Fprintf(out, "✉ turn %d took in %s\n", p.Turn, deliveries(p))
	case event.Interrupted:
		fmt.Fprintf(out, "! %s\n", interruption(p))
	case event.ModelRetry:
		fmt.Fprintf(out, "⟳ %s\n", retryLine(p))
		if p.Message != "" {
			writeBlock(out, resultIndent, resultIndent, p.Message, 1, resultWidth)
		}
	case event.Learning:
		fmt.Fprintf(out, "* %s\n", learning(p))
	case event.LearningExtracted, event.KnowledgeForgot:
		s, _ := describeSync(p)
		fmt.Fprintf(out, "* %s\n", s)
	case event.SyncMessageSent, event.SyncDelivered, event.SyncIgnored:
		s, _ := describeSync(p)
		fmt.Fprintf(out, "⇄ %s\n", s)
	default:
		if writeWatcherObservation(out, e) {
			return
		}
		// The task's life (created, status, messages): a timed line.
		fmt.Fprintf(out, "%s  %-16s %s\n", e.Time.In(w.loc).Format("15:04:05.000"), e.Kind, describeEvent(e))
	}
}

// How tool calls and results are shown.
const (
	argsWidth    = 120 // runes of a call's arguments
	resultLines  = 4   // lines of a result
	resultWidth  = 120 // runes per line of a result
	resultIndent = "    "
)
