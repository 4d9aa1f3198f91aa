package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/event"
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
finishes or you interrupt it (Ctrl-C): each turn, the model's text as it
streams, tool calls and their results, costs, changed files, messages delivered,
and the task's changes of status. Each line you type is queued for the task as
a user message; when the task asks a question, the next line you type answers
it. At the end of stdin attach keeps following. --json prints the events as
JSON, one per line.`,
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
	return follow(ctx, c, event.Query{Filter: event.Filter{TaskID: id}}, emit, terminalFor(id))
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
