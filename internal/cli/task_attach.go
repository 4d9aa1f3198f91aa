package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

type taskAttachOpts struct {
	json bool
}

func (a *app) newTaskAttachCmd() *cobra.Command {
	var opts taskAttachOpts
	cmd := &cobra.Command{
		Use:   "attach ID",
		Short: "Follow a task live; lines typed on stdin are sent to it as messages",
		Long: `Attach prints the task's run from its start and then live, until the task
stops running or you interrupt it (Ctrl-C): each turn, the model's text as it
streams, tool calls and their results, costs, changed files, messages delivered,
and the task's changes of status. Attach returns when the task pauses, finishes
its work (merging), completes, fails or is cancelled, and when it asks a
question, unless stdin is a terminal: then the next line you type answers it.
Each line you type is queued for the task as a user message. At the end of
stdin attach keeps following. --json prints the events as JSON, one per line.`,
		Args: exactArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runTaskAttach(cmd.Context(), opts, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print events as JSON, one per line")
	return cmd
}

func (a *app) runTaskAttach(ctx context.Context, opts taskAttachOpts, args []string, in io.Reader, out, errOut io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	d, err := c.GetTask(ctx, args[0])
	if err != nil {
		return err
	}
	id := d.Task.ID
	// Only a change of status after attaching ends it early: the replayed
	// history holds the pauses and questions of the past.
	// A daemon that cannot say where its log ends leaves attach to follow
	// until a final status, as before.
	after := int64(math.MaxInt64)
	if st, err := c.Status(ctx); err == nil {
		after = st.LastEventID
	}
	if !opts.json {
		fmt.Fprintf(out, "attached to %s (%s): %s\n", id, d.Task.Status, truncate(d.Task.Description, 60))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The stdin reader sends each line as a message. A read from a terminal
	// cannot be interrupted, so the reader is joined when stdin ends; when the
	// task finishes first, the process exits with the read still pending.
	go sendLines(ctx, c, string(id), in, errOut)
	emit := jsonLines(out)
	if !opts.json {
		emit = newLiveWriter(out, time.Local, true).Print
	}
	stop := attachStop(id, after, isTerminal(in))
	var last task.Status
	err = follow(ctx, c, event.Query{Filter: event.Filter{TaskID: id}}, emit, func(e event.Event) bool {
		if stop(e) {
			last = e.Payload.(event.TaskStatus).To
			return true
		}
		return false
	})
	if err == nil && !opts.json && !last.Terminal() && last != "" {
		fmt.Fprintf(out, "detached: %s is %s; %s\n", id, last, attachNext(id, last))
	}
	return err
}

// attachStop returns the stop function of attach: the task reaching a
// terminal status at any point, or, after event after (the last one logged
// when attach began), pausing, finishing its work (merging) or asking a
// question; a question keeps attach following when stdin is a terminal, to
// take the answer typed next.
func attachStop(id task.ID, after int64, interactive bool) func(event.Event) bool {
	return func(e event.Event) bool {
		p, ok := e.Payload.(event.TaskStatus)
		if !ok || e.TaskID != id {
			return false
		}
		switch {
		case p.To.Terminal():
			return true
		case e.ID <= after:
			return false
		case p.To == task.Paused || p.To == task.Merging:
			return true
		case p.To == task.Waiting:
			return !interactive
		}
		return false
	}
}

// attachNext says what to do about a task attach left.
func attachNext(id task.ID, s task.Status) string {
	switch s {
	case task.Waiting:
		return fmt.Sprintf("answer it: neuraphage task send %s \"...\"", id)
	case task.Paused:
		return fmt.Sprintf("neuraphage task resume %s continues it", id)
	case task.Merging:
		return "neuraphage merge status shows the merge queue"
	}
	return "neuraphage task show " + string(id)
}

// isTerminal reports whether r is a character device (a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// sendLines queues each non-empty line of in as a message for the task.
func sendLines(ctx context.Context, c *client.Client, id string, in io.Reader, errOut io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if _, err := c.Send(ctx, id, line); err != nil {
			if ctx.Err() != nil {
				return
			}
			fmt.Fprintf(errOut, "neuraphage: sending %q: %v\n", truncate(line, 40), err)
		}
	}
}
