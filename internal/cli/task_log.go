package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/llm"
)

type taskLogOpts struct {
	from int
	json bool
}

func (a *app) newTaskLogCmd() *cobra.Command {
	var opts taskLogOpts
	cmd := &cobra.Command{
		Use:   "log ID",
		Short: "Print a task's conversation with its model",
		Long: `Log prints the conversation the task's agent has stored, turn by turn: the
user's text (the task, your messages, and nudges and notices as the model saw
them), the model's text, each tool call with its arguments and each result with
its first lines. Long texts are cut; --json prints every entry in full.
--from N starts at entry N (entries are numbered from 0).`,
		Args: exactArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runTaskLog(cmd.Context(), opts, args, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().IntVar(&opts.from, "from", 0, "start at entry N")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func (a *app) runTaskLog(ctx context.Context, opts taskLogOpts, args []string, out io.Writer) error {
	if opts.from < 0 {
		return &usageError{msg: fmt.Sprintf("--from %d: entries are numbered from 0", opts.from), hint: "--from 0 prints the whole conversation"}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	l, err := c.TaskLog(ctx, args[0], opts.from)
	if err != nil {
		return err
	}
	if opts.json {
		if l.Entries == nil {
			l.Entries = []api.LogEntry{}
		}
		return writeJSON(out, l)
	}
	writeTaskLog(out, l, opts.from, time.Local)
	return nil
}

// How much of a conversation's texts `task log` shows.
const (
	userLines      = 20 // lines of a user's text
	assistantLines = 60 // lines of the model's text
	roleIndent     = "           "
)

// writeTaskLog renders a conversation: a header per turn, texts under their
// author, tool calls and results with arrows.
func writeTaskLog(out io.Writer, l api.TaskLog, from int, loc *time.Location) {
	if len(l.Entries) == 0 {
		if from > 0 {
			fmt.Fprintf(out, "%s: no entries from %d on\n", l.TaskID, from)
		} else {
			fmt.Fprintf(out, "%s has no conversation yet\n", l.TaskID)
		}
		return
	}
	names := map[string]string{} // tool call id → tool name
	turn := -1
	for _, e := range l.Entries {
		if e.Turn != turn {
			turn = e.Turn
			fmt.Fprintf(out, "── turn %d · %s ──\n", e.Turn, e.At.In(loc).Format("2006-01-02 15:04:05"))
		}
		writeMessage(out, e.Message, names)
	}
	last := l.Entries[len(l.Entries)-1]
	fmt.Fprintf(out, "(entries %d–%d; `--from %d` shows what follows)\n", l.Entries[0].Seq, last.Seq, last.Seq+1)
}

// writeMessage renders one message. Tool calls are remembered in names so
// that their results can say which call they answer when several were made.
func writeMessage(out io.Writer, m llm.Message, names map[string]string) {
	role, maxLines := "user", userLines
	if m.Role == llm.RoleAssistant {
		role, maxLines = "assistant", assistantLines
	}
	results := 0
	for _, p := range m.Parts {
		if p.ToolResult != nil {
			results++
		}
	}
	for _, p := range m.Parts {
		switch {
		case p.ToolCall != nil:
			names[p.ToolCall.ID] = p.ToolCall.Name
			fmt.Fprintf(out, "→ %s %s\n", p.ToolCall.Name, compactArgs(p.ToolCall.Input, argsWidth))
		case p.ToolResult != nil:
			r := p.ToolResult
			outcome := "ok"
			if r.IsError {
				outcome = "error"
			}
			name := ""
			if n := names[r.CallID]; n != "" && results > 1 {
				name = n + " "
			}
			fmt.Fprintf(out, "← %s%s (%d bytes)\n", name, outcome, len(r.Content))
			if r.Content != "" {
				writeBlock(out, resultIndent, resultIndent, r.Content, resultLines, resultWidth)
			}
		case p.Text != "":
			writeBlock(out, fmt.Sprintf("%-10s ", role), roleIndent, p.Text, maxLines, 0)
		}
	}
}
