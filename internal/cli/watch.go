package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/event"
)

// watchAbout is what the watch commands' help repeats.
const watchAbout = `A watcher session is a reviewer looking over tasks' shoulders for one concern
(its brief: security, tests, scope, or your own words). It follows the tasks'
activity as it happens and, at each breakpoint (a turn's end, a tool result that
changed files, or a while after activity began), asks its model whether to speak.
It interjects only when it matters: a peer's word is a suggestion, a supervisor's
is to be followed; an urgent interjection interrupts the task's turn at once,
another reaches it at its next step. Every evaluation, spoken or not, is in
` + "`watch log`" + `, charged to the session (` + "`cost --by watcher`" + `).

A session is named by its name (security, security-2), its id (w-3f9a1c) or a
prefix of the id.`

func (a *app) newWatchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Add, list and steer watcher sessions: reviewers that interject",
		Long:  watchAbout,
		Args:  noArgs,
		RunE:  help,
	}
	cmd.AddCommand(a.newWatchAddCmd(), a.newWatchListCmd(), a.newWatchShowCmd(), a.newWatchLogCmd(),
		a.newWatchActionCmd("rm", "End a watcher session; its log stays", (*app).removeWatcher),
		a.newWatchActionCmd("pause", "Pause a watcher session: it evaluates nothing until resumed", (*app).pauseWatcher),
		a.newWatchActionCmd("resume", "Resume a paused watcher session", (*app).resumeWatcher))
	return cmd
}

type watchAddOpts struct {
	tags                   []string
	all                    bool
	role, brief, briefFile string
	authority, tier        string
	budgetUSD              float64
	json, quiet            bool
}

func (a *app) newWatchAddCmd() *cobra.Command {
	var opts watchAddOpts
	cmd := &cobra.Command{
		Use:   "add (TASK | --tags T | --all) (--role NAME | --brief TEXT | --brief-file F)",
		Short: "Add a watcher session to a task, to the tasks with given tags, or to all",
		Long: watchAbout + `

What it watches: one TASK (the session ends when the task does), --tags (every
task carrying one of them, those created later too) or --all. What it watches
for: --role names a built-in role (security, tests, scope) or one of
personas.yaml's watchers:, --brief says it in your words, --brief-file reads them
from a file. --authority and --tier override the role's.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return &usageError{msg: fmt.Sprintf("%s takes at most one TASK, got %d arguments", cmd.CommandPath(), len(args)),
					hint: "quote a brief: --brief \"watch for leaked keys\""}
			}
			return nil
		},
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runWatchAdd(cmd.Context(), opts, args, cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.tags, "tags", nil, "watch every task with one of these comma-separated tags, later ones too")
	f.BoolVar(&opts.all, "all", false, "watch every task")
	f.StringVar(&opts.role, "role", "", "a watcher role: security, tests, scope, or one of personas.yaml")
	f.StringVar(&opts.brief, "brief", "", "what to watch for, in your words")
	f.StringVar(&opts.briefFile, "brief-file", "", "read the brief from this file")
	f.StringVar(&opts.authority, "authority", "", "peer (a suggestion) or supervisor (to be followed); default the role's, else peer")
	f.StringVar(&opts.tier, "tier", "", "model tier of its evaluations: router, worker or expert; default the role's, else router")
	f.Float64Var(&opts.budgetUSD, "budget-usd", 0, "pause the session once its evaluations have cost this many dollars (0: no cap)")
	f.BoolVar(&opts.json, "json", false, "print the session as JSON")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "print only the session's name")
	return cmd
}

// watchAddRequest checks the flags of `watch add` and builds the request.
func watchAddRequest(opts watchAddOpts, args []string, readFile func(string) ([]byte, error)) (api.WatchAddRequest, error) {
	req := api.WatchAddRequest{Tags: opts.tags, All: opts.all, Role: opts.role, Brief: opts.brief, Authority: opts.authority, Tier: opts.tier, BudgetUSD: opts.budgetUSD}
	if len(args) == 1 {
		req.Task = args[0]
	}
	targets := 0
	for _, set := range []bool{req.Task != "", len(req.Tags) > 0, req.All} {
		if set {
			targets++
		}
	}
	if targets != 1 {
		return req, &usageError{msg: "watch add needs exactly one of TASK, --tags and --all", hint: "neuraphage watch add t-3f9a --role security"}
	}
	briefs := 0
	for _, set := range []bool{opts.role != "", opts.brief != "", opts.briefFile != ""} {
		if set {
			briefs++
		}
	}
	if briefs != 1 {
		return req, &usageError{msg: "watch add needs exactly one of --role, --brief and --brief-file", hint: "--role security, or --brief \"watch for leaked keys\""}
	}
	if opts.briefFile != "" {
		b, err := readFile(opts.briefFile)
		if err != nil {
			return req, usageErrorf("--brief-file: %v", err)
		}
		if req.Brief = strings.TrimSpace(string(b)); req.Brief == "" {
			return req, usageErrorf("--brief-file %s is empty: write what to watch for in it", opts.briefFile)
		}
	}
	switch opts.authority {
	case "", "peer", "supervisor":
	default:
		return req, &usageError{msg: fmt.Sprintf("--authority %q is not an authority", opts.authority), hint: "use --authority peer or --authority supervisor"}
	}
	switch opts.tier {
	case "", "router", "worker", "expert":
	default:
		return req, &usageError{msg: fmt.Sprintf("--tier %q is not a model tier", opts.tier), hint: "use --tier router, worker or expert"}
	}
	if opts.budgetUSD < 0 {
		return req, usageErrorf("--budget-usd must not be negative")
	}
	return req, nil
}

func (a *app) runWatchAdd(ctx context.Context, opts watchAddOpts, args []string, out io.Writer) error {
	req, err := watchAddRequest(opts, args, os.ReadFile)
	if err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	ws, err := c.AddWatcher(ctx, req)
	if err != nil {
		return err
	}
	switch {
	case opts.json:
		return writeJSON(out, ws)
	case opts.quiet:
		fmt.Fprintln(out, ws.Name)
	default:
		fmt.Fprintf(out, "added %s (%s, %s, %s) watching %s\n", ws.Name, ws.ID, dash(ws.Title), ws.Authority, watchTarget(ws.Target))
	}
	return nil
}

func (a *app) newWatchListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the watcher sessions with what they cost",
		Args:    noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			all, err := c.Watchers(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				if all == nil {
					all = []api.WatchSession{}
				}
				return writeJSON(cmd.OutOrStdout(), all)
			}
			writeWatchList(cmd.OutOrStdout(), all)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as a JSON array")
	return cmd
}

func writeWatchList(out io.Writer, all []api.WatchSession) {
	if len(all) == 0 {
		fmt.Fprintln(out, "no watcher sessions: `neuraphage watch add TASK --role security` adds one")
		return
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "NAME\tID\tSTATUS\tAUTHORITY\tTARGET\tEVALS\tINTERJECTED\tSPENT\tBUDGET")
	for _, ws := range all {
		budget := "-"
		if ws.BudgetUSD > 0 {
			budget = fmt.Sprintf("$%.4f", ws.BudgetUSD)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t$%.4f\t%s\n", ws.Name, ws.ID, ws.Status, ws.Authority, truncate(watchTarget(ws.Target), 30),
			ws.Evaluations, ws.Interjections, ws.SpentUSD, budget)
	}
	tw.Flush()
}

func watchTarget(t api.WatchTarget) string {
	switch {
	case t.Task != "":
		return "task " + string(t.Task)
	case len(t.Tags) > 0:
		return "tags " + strings.Join(t.Tags, ",")
	}
	return "all tasks"
}

func (a *app) newWatchShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show W",
		Short: "Show a watcher session: its brief, target, status and spending",
		Args:  exactArgs("W"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			ws, err := c.Watcher(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), ws)
			}
			writeWatchSession(cmd.OutOrStdout(), ws)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the session as JSON")
	return cmd
}

func writeWatchSession(out io.Writer, ws api.WatchSession) {
	fmt.Fprintf(out, "%s  %s  %s\n", ws.Name, ws.ID, dash(ws.Title))
	status := ws.Status
	if ws.Reason != "" {
		status += " (" + ws.Reason + ")"
	}
	fmt.Fprintf(out, "status:     %s\n", status)
	fmt.Fprintf(out, "watches:    %s\n", watchTarget(ws.Target))
	fmt.Fprintf(out, "authority:  %s\n", ws.Authority)
	fmt.Fprintf(out, "tier:       %s\n", ws.Tier)
	if ws.Role != "" {
		fmt.Fprintf(out, "role:       %s\n", ws.Role)
	}
	spent := fmt.Sprintf("$%.4f", ws.SpentUSD)
	if ws.BudgetUSD > 0 {
		spent += fmt.Sprintf(" of $%.4f", ws.BudgetUSD)
	}
	fmt.Fprintf(out, "spent:      %s in %d evaluations, %d interjections\n", spent, ws.Evaluations, ws.Interjections)
	fmt.Fprintf(out, "brief:\n")
	for _, line := range strings.Split(strings.TrimRight(ws.Brief, "\n"), "\n") {
		fmt.Fprintf(out, "  %s\n", line)
	}
}

type watchLogOpts struct {
	follow, json bool
	limit        int
}

func (a *app) newWatchLogCmd() *cobra.Command {
	var opts watchLogOpts
	cmd := &cobra.Command{
		Use:   "log W",
		Short: "Show a watcher session's evaluations: interjections and notes alike",
		Long: `Log shows every evaluation of the session, oldest first: when, which task, what
it decided (interject, urgently or not, and whether it was sent; continue, with
its note; failed, with why) and what it cost. --follow goes on showing new ones
as they happen.`,
		Args: exactArgs("W"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runWatchLog(cmd.Context(), opts, args[0], cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.BoolVarP(&opts.follow, "follow", "f", false, "keep showing new evaluations until interrupted")
	f.BoolVar(&opts.json, "json", false, "print each evaluation as a JSON line")
	f.IntVar(&opts.limit, "limit", 0, "only the newest N evaluations (0: all)")
	return cmd
}

func (a *app) runWatchLog(ctx context.Context, opts watchLogOpts, ref string, out io.Writer) error {
	if opts.limit < 0 {
		return &usageError{msg: fmt.Sprintf("--limit %d: want a number of evaluations, 0 for all", opts.limit), hint: "e.g. --limit 20"}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	// The stream starts before the log is read: an evaluation recorded
	// between the two is read once (after), never missed.
	var stream interface {
		Next() (event.Event, error)
		Close() error
	}
	if opts.follow {
		s, err := c.Watch(ctx, event.Query{AfterID: -1, Filter: event.Filter{Kinds: []string{string(event.KindWatchEvaluation)}}})
		if err != nil {
			return err
		}
		defer s.Close()
		stream = s
	}
	l, err := c.WatcherLog(ctx, ref, 0, opts.limit)
	if err != nil {
		return err
	}
	if !opts.json && len(l.Evaluations) == 0 && !opts.follow {
		fmt.Fprintf(out, "%s has not evaluated anything yet\n", l.Session.Name)
		return nil
	}
	var last int64
	show := func(evs []api.WatchEvaluation) error {
		for _, e := range evs {
			last = max(last, e.ID)
			if opts.json {
				if err := writeJSONLine(out, e); err != nil {
					return err
				}
				continue
			}
			writeWatchEvaluation(out, e)
		}
		return nil
	}
	if err := show(l.Evaluations); err != nil || stream == nil {
		return err
	}
	for {
		e, err := stream.Next()
		if err != nil {
			// The daemon ending the stream (it stops) ends the command, as
			// for events --follow.
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("following the evaluations: %w", err)
		}
		if p, ok := e.Payload.(event.WatchEvaluation); !ok || p.Session != l.Session.ID || p.EvaluationID <= last {
			continue
		}
		more, err := c.WatcherLog(ctx, l.Session.ID, last, 0)
		if err != nil {
			return err
		}
		if err := show(more.Evaluations); err != nil {
			return err
		}
	}
}

func writeWatchEvaluation(out io.Writer, e api.WatchEvaluation) {
	head := fmt.Sprintf("#%d %s %s", e.ID, e.At.Local().Format(time.DateTime), e.Task)
	cost := fmt.Sprintf("$%.4f, %d observations", e.CostUSD, e.Observations)
	switch e.Decision {
	case "interject":
		how := "interjected"
		if e.Urgent {
			how = "interjected URGENTLY"
		}
		sent := fmt.Sprintf("sent as message %d", e.InjectionID)
		if e.InjectionID == 0 {
			sent = "not sent: " + dash(e.Undelivered)
		}
		fmt.Fprintf(out, "%s  %s (%s; %s)\n", head, how, sent, cost)
		for _, line := range strings.Split(e.Content, "\n") {
			fmt.Fprintf(out, "    %s\n", line)
		}
	case "continue":
		fmt.Fprintf(out, "%s  continue (%s)\n", head, cost)
		if e.Note != "" {
			fmt.Fprintf(out, "    %s\n", truncate(e.Note, 200))
		}
	default:
		fmt.Fprintf(out, "%s  %s: %s\n", head, e.Decision, truncate(e.Error, 200))
	}
}

func (a *app) newWatchActionCmd(name, short string, do func(a *app, ctx context.Context, ref string) (api.WatchSession, error)) *cobra.Command {
	return &cobra.Command{
		Use:   name + " W",
		Short: short,
		Args:  exactArgs("W"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			ws, err := do(a, cmd.Context(), args[0])
			if err != nil {
				return err
			}
			status := ws.Status
			if ws.Reason != "" {
				status += " (" + ws.Reason + ")"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %s\n", ws.Name, ws.ID, status)
			return nil
		}),
	}
}

func (a *app) removeWatcher(ctx context.Context, ref string) (api.WatchSession, error) {
	c, err := a.connect(ctx)
	if err != nil {
		return api.WatchSession{}, err
	}
	return c.RemoveWatcher(ctx, ref)
}

func (a *app) pauseWatcher(ctx context.Context, ref string) (api.WatchSession, error) {
	c, err := a.connect(ctx)
	if err != nil {
		return api.WatchSession{}, err
	}
	return c.PauseWatcher(ctx, ref)
}

func (a *app) resumeWatcher(ctx context.Context, ref string) (api.WatchSession, error) {
	c, err := a.connect(ctx)
	if err != nil {
		return api.WatchSession{}, err
	}
	return c.ResumeWatcher(ctx, ref)
}

// writeJSONLine writes v as one line of JSON, around the terminal escaping.
func writeJSONLine(out io.Writer, v any) error {
	return json.NewEncoder(jsonOut(out)).Encode(v)
}
