package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// knowledgeAbout is what the knowledge commands' help repeats.
const knowledgeAbout = `The knowledge store holds what tasks found out: learnings the agents recorded
(record_learning), errors they resolved, searches they answered, their own
"turns out…" statements and, with supervision.syncer.llm_extract, what the
turn-end model pass found. The same discovery from two tasks is one learning
with two sources. The Syncer relays each new learning to the running tasks it
concerns, and puts the most relevant ones into a new task's first context.`

func (a *app) newKnowledgeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "knowledge",
		Short: "Search, show and forget what the tasks have learned",
		Long: knowledgeAbout + `

A learning is named by its number, as the listings show it: 12 or #12 (quote
"#12" in a shell).`,
		Args: noArgs,
		RunE: help,
	}
	cmd.AddCommand(a.newKnowledgeSearchCmd(), a.newKnowledgeListCmd(), a.newKnowledgeShowCmd(), a.newKnowledgeForgetCmd())
	return cmd
}

type knowledgeListOpts struct {
	task  string
	limit int
	json  bool
}

// flags adds --task, --limit and --json, the limit defaulting to limit.
func (o *knowledgeListOpts) flags(cmd *cobra.Command, limit int) {
	f := cmd.Flags()
	f.StringVar(&o.task, "task", "", "only the learnings this task is a source of")
	f.IntVar(&o.limit, "limit", limit, "at most this many (0: all)")
	f.BoolVar(&o.json, "json", false, "print the learnings as a JSON array")
}

func (a *app) newKnowledgeSearchCmd() *cobra.Command {
	var opts knowledgeListOpts
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Find learnings by their words, best matches first",
		Long: `Search lists the learnings matching any word of QUERY (the words joined by
spaces; full text over summary, detail, tags and files), best matches first:
their number, kind, the task that found them (and how many more did), how long
ago they were last found, their tags and summary.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{msg: cmd.CommandPath() + " needs a QUERY: the words to look for",
					hint: "neuraphage knowledge search jwt iat claim"}
			}
			return nil
		},
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runKnowledgeSearch(cmd.Context(), opts, args, cmd.OutOrStdout())
		}),
	}
	opts.flags(cmd, 20)
	return cmd
}

func (a *app) newKnowledgeListCmd() *cobra.Command {
	var opts knowledgeListOpts
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the learnings, oldest first",
		Long: `List lists the learnings of the knowledge store, oldest first: their number,
kind, the task that found them (and how many more did), how long ago they were
last found, their tags and summary. ` + "`knowledge show ID`" + ` shows one in full.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runKnowledgeList(cmd.Context(), opts, "", cmd.OutOrStdout())
		}),
	}
	opts.flags(cmd, 0)
	return cmd
}

func (a *app) runKnowledgeSearch(ctx context.Context, opts knowledgeListOpts, terms []string, out io.Writer) error {
	search := words.OneLine(strings.Join(terms, " "))
	if search == "" {
		return &usageError{msg: "the query is empty", hint: "say what to look for: neuraphage knowledge search jwt iat claim"}
	}
	return a.runKnowledgeList(ctx, opts, search, out)
}

// runKnowledgeList runs list (search "") and search.
func (a *app) runKnowledgeList(ctx context.Context, opts knowledgeListOpts, search string, out io.Writer) error {
	if opts.limit < 0 {
		return &usageError{msg: fmt.Sprintf("--limit %d: want a number of learnings, 0 for all", opts.limit), hint: "e.g. --limit 20"}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	ls, err := c.Learnings(ctx, search, opts.task, opts.limit)
	if err != nil {
		return err
	}
	if opts.json {
		if ls == nil {
			ls = []api.Learning{}
		}
		return writeJSON(out, ls)
	}
	switch {
	case len(ls) == 0 && search != "":
		fmt.Fprintf(out, "no learning matches %q\n", search)
		return nil
	case len(ls) == 0 && opts.task != "":
		fmt.Fprintf(out, "no learnings from task %s\n", opts.task)
		return nil
	}
	writeLearnings(out, ls, time.Now())
	if opts.limit > 0 && len(ls) == opts.limit {
		fmt.Fprintln(out, "(limit reached: --limit 0 shows every one)")
	}
	return nil
}

// writeLearnings renders a row per learning.
func writeLearnings(out io.Writer, ls []api.Learning, now time.Time) {
	if len(ls) == 0 {
		fmt.Fprintln(out, "no learnings yet: the Syncer stores what running tasks find out (`neuraphage supervision stats` shows it at work)")
		return
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "ID\tKIND\tFROM\tUPDATED\tTAGS\tSUMMARY")
	for _, l := range ls {
		fmt.Fprintf(tw, "#%d\t%s\t%s\t%s\t%s\t%s\n", l.ID, dash(l.Kind), learningFrom(l), age(now, l.UpdatedAt),
			dash(strings.Join(l.Tags, ",")), truncate(l.Summary, 70))
	}
	tw.Flush()
}

// learningFrom names the first source of a learning and how many more
// there are: "t-4k2x9 +1".
func learningFrom(l api.Learning) string {
	if len(l.Sources) == 0 {
		return "-"
	}
	s := string(l.Sources[0].TaskID)
	if n := len(l.Sources) - 1; n > 0 {
		s += fmt.Sprintf(" +%d", n)
	}
	return s
}

// parseLearningID reads a learning's number: 12 or #12.
func parseLearningID(arg string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(arg), "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, &usageError{msg: fmt.Sprintf("%q is not a learning's number", arg),
			hint: "name a learning as `neuraphage knowledge list` shows it: 12 or #12"}
	}
	return id, nil
}

type knowledgeOneOpts struct {
	json bool
}

func (a *app) newKnowledgeShowCmd() *cobra.Command {
	var opts knowledgeOneOpts
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one learning in full, with where it went",
		Long: `Show shows one learning: its summary, kind, detail, tags and files; the tasks
that found it out, with how and when; and the sync messages that relayed it:
to which task, how urgent, their state and when they were delivered.`,
		Args: exactArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runKnowledgeShow(cmd.Context(), opts, args[0], cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the learning as JSON, with the messages that relayed it")
	return cmd
}

func (a *app) runKnowledgeShow(ctx context.Context, opts knowledgeOneOpts, arg string, out io.Writer) error {
	id, err := parseLearningID(arg)
	if err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	l, err := c.Learning(ctx, id)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, l)
	}
	writeLearning(out, l, time.Now(), time.Local)
	return nil
}

// writeLearning renders one learning in full.
func writeLearning(out io.Writer, l api.Learning, now time.Time, loc *time.Location) {
	row := func(label, value string) { fmt.Fprintf(out, "%-10s%s\n", label+":", value) }
	row("learning", fmt.Sprintf("#%d (%s)", l.ID, dash(l.Kind)))
	row("summary", words.OneLine(l.Summary))
	if strings.TrimSpace(l.Detail) != "" {
		writeBlock(out, fmt.Sprintf("%-10s", "detail:"), strings.Repeat(" ", 10), l.Detail, 0, 0)
	}
	row("tags", dash(strings.Join(l.Tags, ", ")))
	row("files", dash(strings.Join(l.Files, ", ")))
	row("found", when(now, l.CreatedAt, loc)+", last "+when(now, l.UpdatedAt, loc))
	fmt.Fprintf(out, "sources:\n")
	if len(l.Sources) == 0 {
		fmt.Fprintln(out, "  -")
	}
	tw := newTable(out)
	for _, s := range l.Sources {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.TaskID, dash(s.Kind), when(now, s.At, loc))
	}
	tw.Flush()
	if len(l.Relayed) == 0 {
		fmt.Fprintln(out, "relayed:  to no task")
		return
	}
	fmt.Fprintf(out, "relayed to %d task%s:\n", len(l.Relayed), plural(len(l.Relayed)))
	tw = newTable(out)
	for _, m := range l.Relayed {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", m.To, dash(m.Urgency), dash(m.State), deliveredWhen(m, now, loc), truncate(m.Message, 60))
	}
	tw.Flush()
}

// deliveredWhen renders when a sync message was delivered, and how long
// after it was made: "delivered 09:00:03 (4m ago), after 3.0s"; "-" when
// it was not.
func deliveredWhen(m api.SyncMessage, now time.Time, loc *time.Location) string {
	if m.DeliveredAt == nil || m.DeliveredAt.IsZero() {
		return "-"
	}
	return "delivered " + when(now, *m.DeliveredAt, loc) + ", " + deliveredAfter(m)
}

// deliveredAfter renders how long a sync message took from being made to
// being delivered: "after 3.0s"; "-" when it was not delivered.
func deliveredAfter(m api.SyncMessage) string {
	if m.DeliveredAt == nil || m.DeliveredAt.IsZero() {
		return "-"
	}
	return "after " + millis(max(m.DeliveredAt.Sub(m.CreatedAt).Milliseconds(), 0))
}

func (a *app) newKnowledgeForgetCmd() *cobra.Command {
	var opts knowledgeOneOpts
	cmd := &cobra.Command{
		Use:   "forget ID",
		Short: "Remove a learning from the knowledge store",
		Long: `Forget removes a learning from the knowledge store: it is no longer listed or
found, offered to tasks that start running later, or put into a new task's
first context; messages still held for a task are dropped. What tasks already
took in stays in their conversations, and the
sync messages that carried it stay in ` + "`sync messages`" + `. It cannot be undone.`,
		Args: exactArgs("ID"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runKnowledgeForget(cmd.Context(), opts, args[0], cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the forgotten learning as JSON")
	return cmd
}

func (a *app) runKnowledgeForget(ctx context.Context, opts knowledgeOneOpts, arg string, out io.Writer) error {
	id, err := parseLearningID(arg)
	if err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	l, err := c.Forget(ctx, id)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(out, l)
	}
	fmt.Fprintf(out, "forgot learning #%d: %s\n", l.ID, truncate(l.Summary, 70))
	return nil
}

func (a *app) newSyncCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Show what the Syncer relayed between tasks",
		Long:  knowledgeAbout,
		Args:  noArgs,
		RunE:  help,
	}
	cmd.AddCommand(a.newSyncMessagesCmd())
	return cmd
}

type syncMessagesOpts struct {
	task  string
	limit int
	json  bool
}

func (a *app) newSyncMessagesCmd() *cobra.Command {
	var opts syncMessagesOpts
	cmd := &cobra.Command{
		Use:   "messages",
		Short: "List the learnings relayed to tasks: to whom, why, delivered when",
		Long: `Messages lists the newest sync messages, oldest first: one learning relayed to
one task. Each row has the message's number, when it was made, the learning, the
task it came from and the one it went to, its urgency (blocking, helpful, fyi),
its state (held for the recipient's rate limit, queued, delivered, ignored,
blocked by a hook), how long after it was made it was delivered, and the start
of the message. Under it, why: the relationships that held, who decided (the
syncer persona, the deterministic rules, a hook) and any note.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runSyncMessages(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.StringVar(&opts.task, "task", "", "only the messages relayed to this task")
	f.IntVar(&opts.limit, "limit", 50, "at most this many, the newest")
	f.BoolVar(&opts.json, "json", false, "print the messages as a JSON array")
	return cmd
}

func (a *app) runSyncMessages(ctx context.Context, opts syncMessagesOpts, out io.Writer) error {
	if opts.limit <= 0 {
		return &usageError{msg: fmt.Sprintf("--limit %d: want a positive number of messages", opts.limit), hint: "e.g. --limit 20"}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	ms, err := c.SyncMessages(ctx, opts.task, opts.limit)
	if err != nil {
		return err
	}
	if opts.json {
		if ms == nil {
			ms = []api.SyncMessage{}
		}
		return writeJSON(out, ms)
	}
	writeSyncMessages(out, ms, time.Local)
	return nil
}

// writeSyncMessages renders a row per sync message, and under each why it
// was sent.
func writeSyncMessages(out io.Writer, ms []api.SyncMessage, loc *time.Location) {
	if len(ms) == 0 {
		fmt.Fprintln(out, "no sync messages yet: the Syncer relays a learning to the running tasks it concerns")
		return
	}
	// The rows are aligned apart from the lines under them: a line without
	// tabs would end tabwriter's columns.
	var b bytes.Buffer
	tw := newTable(&b)
	fmt.Fprintln(tw, "ID\tWHEN\tLEARNING\tFROM → TO\tURGENCY\tSTATE\tDELIVERED\tMESSAGE")
	for _, m := range ms {
		fmt.Fprintf(tw, "%d\t%s\t#%d\t%s → %s\t%s\t%s\t%s\t%s\n", m.ID, m.CreatedAt.In(loc).Format(time.Stamp), m.LearningID,
			dash(string(m.From)), dash(string(m.To)), dash(m.Urgency), dash(m.State), deliveredAfter(m), truncate(m.Message, 60))
	}
	tw.Flush()
	rows := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	fmt.Fprintln(out, strings.TrimRight(rows[0], " "))
	for i, m := range ms {
		fmt.Fprintln(out, strings.TrimRight(rows[i+1], " "))
		if why := syncWhy(m); why != "" {
			fmt.Fprintf(out, "    why: %s\n", why)
		}
	}
}

// syncWhy says why a message was sent, and who decided: "shared tags:
// auth; decided by persona; note: …".
func syncWhy(m api.SyncMessage) string {
	var why []string
	if r := truncate(m.Reason, 100); r != "" {
		why = append(why, r)
	}
	if m.DecidedBy != "" {
		why = append(why, "decided by "+m.DecidedBy)
	}
	if n := truncate(m.Note, 80); n != "" {
		why = append(why, "note: "+n)
	}
	return strings.Join(why, "; ")
}
