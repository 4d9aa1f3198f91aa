package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

type taskNewOpts struct {
	repo, persona, parent, engine, model, context  string
	contextFile                                    string
	workflow                                       string
	tags                                           []string
	watch                                          []string
	priority                                       int
	budgetUSD                                      float64
	maxIterations                                  int
	maxTokens                                      int64
	noStart, noSupervision, noOverlap, json, quiet bool
}

func (a *app) newTaskNewCmd() *cobra.Command {
	var opts taskNewOpts
	cmd := &cobra.Command{
		Use:   "new DESCRIPTION|-",
		Short: "Create a task",
		Long: `Create a task from a description. It is queued to run unless --no-start holds
it (paused) until ` + "`task resume`" + `. A queued task runs as soon as a slot is free
(executor.max_concurrent), most urgent first, once the tasks it depends on have
completed. Budgets pause the task when spent; ` + "`task resume`" + ` grants as much again.

With --workflow the task runs as phases, each a child task of one persona (or
several at once), one after another on the task's branch: --workflow names a
workflow file, or else a named workflow of personas.yaml (` + "`neuraphage workflow list`" + `).
A workflow file may give the description (` + "`description:`" + `); DESCRIPTION then
may be left out. The phases choose the personas, so --persona goes without it.

A DESCRIPTION of - is read from standard input. A description holds at most
10000 bytes; give a longer text (a spec, a log) with --context-file FILE and a
short description of the work.`,
		Args: maxOneArg("DESCRIPTION"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			if err := readTaskNewInput(&opts, args, cmd.InOrStdin()); err != nil {
				return err
			}
			return a.runTaskNew(cmd.Context(), opts, cmd.Flags().Changed("priority"), args, cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.StringVar(&opts.repo, "repo", "", "git repository the task works on, in a worktree of its own (default: the one holding the current directory)")
	f.StringVar(&opts.persona, "persona", "", "persona to run as (default: chosen by the router; see neuraphage persona list)")
	f.StringVar(&opts.workflow, "workflow", "", "run as the phases of this workflow file, or of this named workflow (see neuraphage workflow list)")
	f.StringSliceVar(&opts.tags, "tags", nil, "comma-separated tags, e.g. auth,jwt")
	f.StringSliceVar(&opts.watch, "watch", nil, "attach a watcher session of this role (security, tests, scope, …; repeatable); see neuraphage watch")
	f.StringVar(&opts.parent, "parent", "", "parent task id")
	f.IntVar(&opts.priority, "priority", 2, "0 (most urgent) to 4; default from tasks.default_priority")
	f.StringVar(&opts.engine, "engine", "", "engine that drives the agent (default from tasks.default_engine)")
	f.StringVar(&opts.model, "model", "", "model to use instead of the persona's tier")
	f.Float64Var(&opts.budgetUSD, "budget-usd", 0, "pause the task once it has spent this many dollars (0: budget.task_usd from the config)")
	f.IntVar(&opts.maxIterations, "max-iterations", 0, "pause the task after this many model calls (0: agent.max_iterations from the config)")
	f.Int64Var(&opts.maxTokens, "max-tokens", 0, "pause the task once it has used this many tokens (0: no limit)")
	f.StringVar(&opts.context, "context", "", "extra context for the agent")
	f.StringVar(&opts.contextFile, "context-file", "", "read extra context for the agent from this `FILE` (- for standard input); for long texts")
	f.BoolVar(&opts.noStart, "no-start", false, "create the task paused, until task resume starts it")
	f.BoolVar(&opts.noSupervision, "no-supervision", false, "keep the Watcher away from the task: no health checks, nudges, escalations or pauses")
	f.BoolVar(&opts.noOverlap, "no-overlap-notices", false, "never tell the task of other running tasks changing its files (tags it no-overlap-notices)")
	f.BoolVar(&opts.json, "json", false, "print the task as JSON")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "print only the task id")
	return cmd
}

func (a *app) runTaskNew(ctx context.Context, opts taskNewOpts, prioritySet bool, args []string, out io.Writer) error {
	if opts.workflow != "" && opts.persona != "" {
		return &usageError{msg: "--workflow and --persona do not go together: a workflow's phases name their personas",
			hint: "drop --persona, or --workflow; `neuraphage workflow show NAME` shows a workflow's personas"}
	}
	if len(args) == 1 && strings.TrimSpace(args[0]) == "" {
		return &usageError{msg: "the task description is empty", hint: `neuraphage task new "add token expiry checks"`}
	}
	var phases []task.Phase
	description := ""
	if len(args) == 1 {
		description = args[0]
	}
	switch {
	case opts.workflow != "":
		s, _, err := a.loadPersonas()
		if err != nil {
			return err
		}
		var fromFile string
		phases, fromFile, err = resolveWorkflow(s, opts.workflow)
		if err != nil {
			return err
		}
		description = cmp.Or(description, fromFile)
	case opts.persona != "":
		if err := a.checkPersona("--persona", opts.persona); err != nil {
			return err
		}
	}
	if description == "" {
		hint := `neuraphage task new "add token expiry checks"`
		if opts.workflow != "" {
			hint = "give it as an argument, or as `description:` in the workflow file"
		}
		return &usageError{msg: "task new needs a DESCRIPTION of the task", hint: hint}
	}
	if n := len(strings.TrimSpace(description)); n > task.MaxDescriptionLen {
		return &usageError{msg: fmt.Sprintf("the description is %d bytes; at most %d", n, task.MaxDescriptionLen),
			hint: `put the long text in a file and pass it with --context-file FILE, with a short description: neuraphage task new "implement the spec" --context-file spec.md`}
	}
	if prioritySet && (opts.priority < task.MinPriority || opts.priority > task.MaxPriority) {
		return &usageError{msg: fmt.Sprintf("--priority %d is out of range; want %d (most urgent) to %d", opts.priority, task.MinPriority, task.MaxPriority),
			hint: "e.g. --priority 1 for urgent work, --priority 3 for when a slot is free"}
	}
	if opts.budgetUSD < 0 || opts.maxIterations < 0 || opts.maxTokens < 0 {
		return &usageError{msg: "--budget-usd, --max-iterations and --max-tokens must not be negative",
			hint: "e.g. --budget-usd 2.50; 0 takes the default from the config"}
	}
	repo := opts.repo
	if repo == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("finding the current directory: %w", err)
		}
		repo = wd
	}
	repo, err := filepath.Abs(repo)
	if err != nil {
		return usageErrorf("--repo %q: %v", opts.repo, err)
	}
	if fi, err := os.Stat(repo); err != nil || !fi.IsDir() {
		return &usageError{msg: fmt.Sprintf("--repo %q is not a directory", repo),
			hint: "pass the path of a git repository's work tree, or run task new inside one"}
	}
	// The task runs in a worktree of this repository: refuse what cannot
	// have one now, not when the task starts.
	switch _, err := git.Inspect(ctx, repo); {
	case errors.Is(err, git.ErrNotRepo):
		return &usageError{msg: fmt.Sprintf("%s is not inside a git repository; each task works in a git worktree of one", repo), hint: "run `git init` there (and commit), or pass --repo PATH"}
	case errors.Is(err, git.ErrBare):
		return &usageError{msg: fmt.Sprintf("%s is a bare repository; tasks need one with a work tree", repo), hint: "pass --repo with a clone that has a work tree"}
	case errors.Is(err, git.ErrNoGit):
		return fmt.Errorf("checking --repo: %w", err)
	}
	req := api.CreateTaskRequest{
		Description: description, Context: opts.context, Tags: withOverlapTag(opts.tags, opts.noOverlap), ParentID: opts.parent,
		Persona: opts.persona, Engine: opts.engine, Model: opts.model, Repo: repo,
		Budget: api.Budget{MaxCostUSD: opts.budgetUSD, MaxIterations: opts.maxIterations, MaxTokens: opts.maxTokens}, NoStart: opts.noStart,
		Workflow: phases, NoSupervision: opts.noSupervision, Watch: opts.watch,
	}
	if prioritySet {
		req.Priority = &opts.priority
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	t, err := c.CreateTask(ctx, req)
	if err != nil {
		return err
	}
	switch {
	case opts.json:
		return writeJSON(out, t)
	case opts.quiet:
		fmt.Fprintln(out, t.ID)
	default:
		fmt.Fprintf(out, "created %s (%s)\n", t.ID, t.Status)
		if len(phases) > 0 {
			fmt.Fprintf(out, "workflow of %d phase%s: %s\n", len(phases), plural(len(phases)), phasesLine(phases))
		}
		if len(opts.watch) > 0 {
			fmt.Fprintf(out, "watched by %s (`neuraphage watch list`)\n", strings.Join(opts.watch, ", "))
		}
	}
	return nil
}

// readTaskNewInput reads a DESCRIPTION of - and a --context-file into opts
// and args. Standard input is read at most once.
func readTaskNewInput(opts *taskNewOpts, args []string, stdin io.Reader) error {
	descStdin := len(args) == 1 && args[0] == "-"
	if descStdin && opts.contextFile == "-" {
		return &usageError{msg: "the description and --context-file cannot both come from standard input",
			hint: "pass the context as a file: --context-file FILE"}
	}
	if descStdin {
		b, err := io.ReadAll(io.LimitReader(stdin, 4*task.MaxDescriptionLen))
		if err != nil {
			return fmt.Errorf("reading the description from standard input: %w", err)
		}
		args[0] = string(b)
	}
	if opts.contextFile == "" {
		return nil
	}
	if opts.context != "" {
		return &usageError{msg: "--context and --context-file do not go together", hint: "pass one of them"}
	}
	var b []byte
	var err error
	if opts.contextFile == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(opts.contextFile)
	}
	if err != nil {
		return &usageError{msg: fmt.Sprintf("--context-file: %v", err), hint: "pass a readable file, or - for standard input"}
	}
	opts.context = string(b)
	return nil
}

// maxOneArg allows at most one argument, named name, as a usage error.
func maxOneArg(name string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 {
			return &usageError{
				msg:  fmt.Sprintf("%s takes one %s, got %d arguments", cmd.CommandPath(), name, len(args)),
				hint: fmt.Sprintf(`quote it: %s "add token expiry checks"`, cmd.CommandPath()),
			}
		}
		return nil
	}
}

// noOverlapTag is the tag the overlap radar leaves untold
// (overlap.NoNoticesTag).
const noOverlapTag = "no-overlap-notices"

// withOverlapTag adds noOverlapTag to tags when off is set.
func withOverlapTag(tags []string, off bool) []string {
	if !off || slices.Contains(tags, noOverlapTag) {
		return tags
	}
	return append(slices.Clone(tags), noOverlapTag)
}
