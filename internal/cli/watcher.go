package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/stuck"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func (a *app) newWatcherCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "watcher",
		Short: "Inspect the Watcher's diagnoses and replay its checks over recorded runs",
		Long: `The Watcher supervises running tasks: deterministic checks (tier 1) find a
task repeating a call, failing the same way, talking in circles, or spending
without progress; the watcher persona (tier 2) judges what they cannot. It
nudges the task, then escalates it to a stronger persona, then pauses it for
you. ` + "`neuraphage health`" + ` shows how it sees each task now.`,
		Args: noArgs,
		RunE: help,
	}
	cmd.AddCommand(a.newWatcherDiagnosesCmd(), a.newWatcherReplayCmd())
	return cmd
}

type watcherDiagnosesOpts struct {
	task  string
	limit int
	json  bool
}

func (a *app) newWatcherDiagnosesCmd() *cobra.Command {
	var opts watcherDiagnosesOpts
	cmd := &cobra.Command{
		Use:   "diagnoses",
		Short: "List the Watcher's recent verdicts and actions, with their evidence",
		Long: `Diagnoses lists the newest watcher events, oldest first: changes of a task's
health (watcher.health), nudges, escalations, pauses and aborts. Each line has
the time, the task, what happened, the status or severity and the diagnosis;
under it, the steps of the task's run it rests on (step number, kind, tool,
what, and "exact" when the step repeated an earlier one byte for byte).`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runWatcherDiagnoses(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.StringVar(&opts.task, "task", "", "only this task's")
	f.IntVar(&opts.limit, "limit", 50, "at most this many, the newest")
	f.BoolVar(&opts.json, "json", false, "print the events as a JSON array, as events --json does")
	return cmd
}

func (a *app) runWatcherDiagnoses(ctx context.Context, opts watcherDiagnosesOpts, out io.Writer) error {
	if opts.limit <= 0 {
		return &usageError{msg: fmt.Sprintf("--limit %d: want a positive number of diagnoses", opts.limit), hint: "e.g. --limit 20"}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	evs, err := c.Diagnoses(ctx, opts.task, opts.limit)
	if err != nil {
		return err
	}
	if opts.json {
		if evs == nil {
			evs = []event.Event{}
		}
		return writeJSON(out, evs)
	}
	if len(evs) == 0 {
		fmt.Fprintln(out, "no diagnoses yet: the Watcher records one when it sees a task's health change")
		return nil
	}
	for _, e := range evs {
		writeDiagnosis(out, e, time.Local)
	}
	return nil
}

// writeDiagnosis renders a watcher event as one line (time, task, kind,
// status or severity, diagnosis) and its evidence under it.
func writeDiagnosis(out io.Writer, e event.Event, loc *time.Location) {
	kind, status, text := diagnosisColumns(e)
	fmt.Fprintf(out, "%s  %-8s %-9s %-10s %s\n", e.Time.In(loc).Format(time.Stamp), dash(string(e.TaskID)), kind, status, text)
	writeEvidence(out, evidenceIndent, watcherEvidence(e.Payload), 0)
}

// diagnosisColumns splits a watcher event into what happened, its status
// or severity, and the diagnosis.
func diagnosisColumns(e event.Event) (kind, status, text string) {
	kind = strings.TrimPrefix(string(e.Kind), "watcher.")
	about := func(check, diagnosis string) string {
		return strings.Join(nonEmpty(check, truncate(diagnosis, 100)), ": ")
	}
	switch p := e.Payload.(type) {
	case event.HealthCheck:
		text = about(p.Check, p.Diagnosis)
		if step := ladderAction(p.Ladder); step != "" {
			text += " → " + step
		}
		return kind, dash(p.Status), dash(text)
	case event.WatcherNudge:
		text = about(p.Check, p.Diagnosis)
		if p.Unheeded > 0 {
			text += fmt.Sprintf(" (%d unheeded before)", p.Unheeded)
		}
		return kind, dash(p.Severity), dash(text)
	case event.WatcherEscalate:
		if p.Refused != "" {
			return kind, "refused", fmt.Sprintf("from %s: %s (%s)", dash(p.From), truncate(p.Refused, 80), about(p.Check, p.Diagnosis))
		}
		return kind, "escalated", fmt.Sprintf("%s → %s: %s", dash(p.From), dash(p.To), about(p.Check, p.Diagnosis))
	case event.WatcherPause:
		return kind, "paused", about(p.Check, p.Diagnosis) + signals(p.Signals)
	case event.WatcherAbort:
		return kind, dash(p.Reason), about(p.Check, p.Diagnosis) + signals(p.Signals)
	}
	return kind, "-", describeEvent(e)
}

func signals(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return " [" + strings.Join(ss, ", ") + "]"
}

type watcherReplayOpts struct {
	task          string
	from          string
	json          bool
	repeat        int
	failing       int
	noProgress    time.Duration
	runawayTokens int64
	similarity    float64
}

func (a *app) newWatcherReplayCmd() *cobra.Command {
	def := stuck.DefaultConfig()
	opts := watcherReplayOpts{repeat: def.Repeat, failing: def.Failing, noProgress: def.NoProgress,
		runawayTokens: def.RunawayTokens, similarity: def.Similarity}
	cmd := &cobra.Command{
		Use:   "replay FILE | --task ID",
		Short: "Run the Watcher's tier-1 checks over a recorded run and print what they find",
		Long: `Replay runs the Watcher's deterministic checks over a recorded event stream, as
the daemon runs them over a live task, and prints each verdict: the task, the
step it was found at, the check, the status and the diagnosis, and the steps
it rests on. It changes nothing and needs no daemon for a FILE.

FILE holds events one JSON object per line, as ` + "`neuraphage events --follow --json`" + `
and ` + "`task attach --json`" + ` print them; a JSON array, as ` + "`events --json`" + ` prints,
is read too. "-" reads standard input. --task ID replays the task's whole event
log from the daemon instead. The checks read task.status (a resume keeps the
window: a loop across a pause is one loop) and the agent's turns, texts, tool calls and results,
file changes, usage and model errors; other events are ignored. The flags tune
the thresholds, to see what another setting would have done.

--from scores a trajectory recorded by another agent: openhands reads an
OpenHands event stream (a JSON array or JSON lines of its events), swe-agent a
SWE-agent .traj file. docs/watcher.md describes the mapping.`,
		Args: maxArgs("FILE"),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runWatcherReplay(cmd.Context(), opts, args, cmd.InOrStdin(), cmd.OutOrStdout())
		}),
	}
	f := cmd.Flags()
	f.StringVar(&opts.task, "task", "", "replay this task's event log, read from the daemon")
	f.StringVar(&opts.from, "from", "neuraphage", "FILE's format: neuraphage (events), openhands (event stream) or swe-agent (.traj)")
	f.BoolVar(&opts.json, "json", false, `print {"events","tasks","verdicts":[…]}`)
	f.IntVar(&opts.repeat, "repeat", def.Repeat, "the same call with the same result this many times in a row is a loop")
	f.IntVar(&opts.failing, "failing", def.Failing, "the same call failing this many times in a row is a loop")
	f.DurationVar(&opts.noProgress, "no-progress", def.NoProgress, "no file change and no new tool result for this long is stuck")
	f.Int64Var(&opts.runawayTokens, "runaway-tokens", def.RunawayTokens, "this many tokens spent since the last progress is a runaway")
	f.Float64Var(&opts.similarity, "similarity", def.Similarity, "how alike (0 to 1) two masked results must be to count as the same")
	return cmd
}

// replayReport is what `watcher replay --json` prints.
type replayReport struct {
	Events   int             `json:"events"`
	Tasks    int             `json:"tasks"`
	Verdicts []stuck.Verdict `json:"verdicts"`
}

// replayPage is how many events one request of --task reads.
const replayPage = 1000

func (a *app) runWatcherReplay(ctx context.Context, opts watcherReplayOpts, args []string, stdin io.Reader, out io.Writer) error {
	cfg, err := opts.config()
	if err != nil {
		return err
	}
	if (len(args) == 1) == (opts.task != "") {
		return &usageError{msg: "watcher replay takes a FILE or --task ID, exactly one of them",
			hint: "neuraphage watcher replay run.jsonl, or neuraphage watcher replay --task t-4k2x9"}
	}
	var evs []event.Event
	if opts.task != "" {
		c, err := a.connect(ctx)
		if err != nil {
			return err
		}
		if evs, err = taskEvents(ctx, c, opts.task); err != nil {
			return err
		}
	} else {
		name := args[0]
		if evs, err = readTrajectory(name, opts.from, stdin); err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
	}
	rep := replayReport{Events: len(evs), Tasks: countTasks(evs), Verdicts: stuck.Replay(evs, cfg)}
	if opts.json {
		if rep.Verdicts == nil {
			rep.Verdicts = []stuck.Verdict{}
		}
		return writeJSON(out, rep)
	}
	for _, v := range rep.Verdicts {
		fmt.Fprintln(out, verdictLine(v))
		writeEvidence(out, evidenceIndent, v.Evidence, 0)
	}
	fmt.Fprintf(out, "replayed %d event%s of %d task%s: %d verdict%s\n", rep.Events, plural(rep.Events),
		rep.Tasks, plural(rep.Tasks), len(rep.Verdicts), plural(len(rep.Verdicts)))
	return nil
}

// config checks the threshold flags and returns the checks' configuration.
func (o watcherReplayOpts) config() (stuck.Config, error) {
	cfg := stuck.DefaultConfig()
	switch {
	case o.repeat < 2:
		return cfg, usageErrorf("--repeat %d: a repeat takes at least 2 calls", o.repeat)
	case o.failing < 2:
		return cfg, usageErrorf("--failing %d: a failing loop takes at least 2 calls", o.failing)
	case o.noProgress <= 0:
		return cfg, usageErrorf("--no-progress %s: want a positive duration, e.g. 10m", o.noProgress)
	case o.runawayTokens <= 0:
		return cfg, usageErrorf("--runaway-tokens %d: want a positive number of tokens", o.runawayTokens)
	case o.similarity <= 0 || o.similarity > 1:
		return cfg, usageErrorf("--similarity %g: want a number above 0 and at most 1 (1: identical after masking)", o.similarity)
	}
	cfg.Repeat, cfg.Failing, cfg.NoProgress, cfg.RunawayTokens, cfg.Similarity = o.repeat, o.failing, o.noProgress, o.runawayTokens, o.similarity
	return cfg, nil
}

// taskEvents reads the event log of one task from the daemon, page by
// page: the kinds the checks read.
func taskEvents(ctx context.Context, c *client.Client, ref string) ([]event.Event, error) {
	q := event.Query{Filter: event.Filter{TaskID: task.ID(ref), Kinds: []string{"task.status", "agent"}}, Limit: replayPage}
	var evs []event.Event
	for {
		page, err := c.Events(ctx, q)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			return evs, nil
		}
		evs = append(evs, page...)
		q.AfterID = page[len(page)-1].ID
	}
}

// readTrajectory reads FILE in the format from: the daemon's events, or a
// public trajectory format converted to them (as task "imported").
func readTrajectory(name, from string, stdin io.Reader) ([]event.Event, error) {
	if from == "" || from == "neuraphage" {
		return readEventFile(name, stdin)
	}
	conv := map[string]func(io.Reader, task.ID) ([]event.Event, error){
		"openhands": stuck.FromOpenHands, "swe-agent": stuck.FromSWEAgent}[from]
	if conv == nil {
		return nil, usageErrorf("--from %q: want neuraphage, openhands or swe-agent", from)
	}
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return conv(r, "imported")
}

// readEventFile reads a recorded stream of events from the file name, or
// stdin for "-": JSON lines, or one JSON array.
func readEventFile(name string, stdin io.Reader) ([]event.Event, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	// Look at the first non-blank byte without consuming anything, so that
	// the line numbers of errors stay the file's.
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(64 << 10)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		var evs []event.Event
		if err := json.NewDecoder(br).Decode(&evs); err != nil {
			return nil, fmt.Errorf("not a JSON array of events: %w", err)
		}
		return evs, nil
	}
	return stuck.ReadJSONL(br)
}

func countTasks(evs []event.Event) int {
	seen := map[task.ID]bool{}
	for _, e := range evs {
		if e.TaskID != "" {
			seen[e.TaskID] = true
		}
	}
	return len(seen)
}

// verdictLine: "t-4k2x9 step 6: failing (stuck, exact): the same call …".
func verdictLine(v stuck.Verdict) string {
	about := []string{dash(v.Status)}
	if v.Exact {
		about = append(about, "exact")
	}
	if v.Tier2Only {
		about = append(about, "tier 2 only: the Watcher would ask its persona")
	}
	s := fmt.Sprintf("%s step %d: %s (%s): %s", dash(string(v.TaskID)), v.Step, v.Check, strings.Join(about, ", "), v.Diagnosis)
	if v.EventID != 0 {
		s += fmt.Sprintf(" [event %d]", v.EventID)
	}
	return s
}
