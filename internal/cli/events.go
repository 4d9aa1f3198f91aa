package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
(task, task.status). --since takes a duration back from now (10m, 2h), an
RFC 3339 time or a date. --follow keeps printing events as they happen; with
--json it prints one JSON object per line.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runEvents(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.StringVar(&opts.task, "task", "", "only this task's events")
	f.StringSliceVar(&opts.kinds, "kind", nil, "only these kinds or kind prefixes (comma-separated)")
	f.StringVar(&opts.since, "since", "", "only events since T: 10m, 2h, 2026-11-21 or 2026-11-21T09:00:00Z")
	f.Int64Var(&opts.after, "after", 0, "only events with an id above this one")
	f.IntVar(&opts.limit, "limit", 1000, "print at most this many logged events (without --follow)")
	f.BoolVarP(&opts.follow, "follow", "f", false, "keep printing new events until interrupted")
	f.BoolVar(&opts.json, "json", false, "print JSON (an array; with --follow one object per line)")
	return cmd
}

// parseSince reads a --since value relative to now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, usageErrorf("--since %q: a duration back from now must be positive", s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, &usageError{msg: fmt.Sprintf("--since %q is not a duration, time or date", s), hint: "e.g. --since 10m, --since 2026-11-21"}
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
			printEvent(out, e)
		}
		if opts.limit > 0 && len(evs) == opts.limit {
			fmt.Fprintf(out, "(limit reached: --after %d shows more)\n", evs[len(evs)-1].ID)
		}
		return nil
	}
	q.Limit = 0
	return follow(ctx, c, q, out, opts.json, nil)
}

// follow prints events from a watch stream until ctx ends, the stream ends, or
// stop returns true for an event (printed first).
func follow(ctx context.Context, c *client.Client, q event.Query, out io.Writer, asJSON bool, stop func(event.Event) bool) error {
	s, err := c.Watch(ctx, q)
	if err != nil {
		return err
	}
	defer s.Close()
	enc := json.NewEncoder(out)
	for {
		e, err := s.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("following events: %w", err)
		}
		if asJSON {
			if err := enc.Encode(e); err != nil {
				return err
			}
		} else {
			printEvent(out, e)
		}
		if stop != nil && stop(e) {
			return nil
		}
	}
}

// terminalFor returns a stop function that ends following when task id
// reaches a terminal status.
func terminalFor(id task.ID) func(event.Event) bool {
	return func(e event.Event) bool {
		p, ok := e.Payload.(event.TaskStatus)
		return ok && e.TaskID == id && p.To.Terminal()
	}
}
