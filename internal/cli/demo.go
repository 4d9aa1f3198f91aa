package cli

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

//go:embed demodata/script.yaml
var demoScript []byte

type demoOpts struct {
	keep bool
}

func (a *app) newDemoCmd() *cobra.Command {
	var opts demoOpts
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run eight agents on a scratch repository, offline",
		Long: `Demo shows Neuraphage at work with no API key and no network. It makes a
scratch git repository and a scratch NEURAPHAGE_HOME, starts the scripted model
server (the Anthropic wire format over real HTTP) and a daemon in this process,
and runs eight agents through the API as the CLI would, three at once first. Each task works
in its own git worktree on its own branch. The agents really read, write and
edit files and run commands through their tools; one asks its user a question
and the demo answers it; a message is delivered to another at its next turn
boundary; a model call fails once and is retried. Finished work is committed
and lands on main through the merge queue. While two tasks have README.md
changed, a teammate commits to main: the main watcher sees it at once, tells
both, and rebases them at their next tool boundary with their uncommitted
edits carried over. The two tasks change the same line of README.md, so the
second to finish is sent back with the conflict, merges main, and lands too.
Then a fourth task loops on a failing command: the Watcher finds the loop by
its shape, with the steps as evidence, asks the watcher persona, nudges the
task with a specific hint, and the task recovers and lands. Last, three auth
tasks run at once (seed 004's scenario): one finds out that the project's JWT
library rejects tokens without an iat claim, from its failing and then
passing check; the Syncer extracts that learning, the syncer persona relays it
to the login-form and auth-test tasks (blocking: it interrupts them), and
they get their tokens right the first time; a task started afterwards gets it
in its first context. Then one task runs on each external engine (Claude Code,
Codex, Gemini CLI) whose CLI is installed, against the same scripted server;
where a CLI is missing the demo says so, with how to install it, and runs that
task on the native loop. The demo installs nothing. The demo prints the live timeline from the event stream, a summary
with tokens and cost, main's history, and then restarts the daemon to show
that everything is back from the store. --keep leaves the scratch directory.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runDemo(cmd.Context(), opts, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&opts.keep, "keep", false, "keep the scratch repository and home for inspection")
	return cmd
}

// demoTimeout bounds the whole scene; the scripted model answers in
// hundreds of milliseconds, so it only trips when something is broken.
const demoTimeout = 2 * time.Minute

func (a *app) runDemo(ctx context.Context, opts demoOpts, out io.Writer) error {
	// The demo's daemon runs in this process, its sandboxed commands too:
	// the user's keys must not be in this process's exec-time environment.
	if err := a.hideSecrets(config.Default()); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()
	root, err := os.MkdirTemp("", "np-demo")
	if err != nil {
		return fmt.Errorf("making a scratch directory: %w", err)
	}
	if opts.keep {
		defer fmt.Fprintf(out, "\nscratch directory kept: %s\n  repository  %s\n  NEURAPHAGE_HOME=%s\n", root, filepath.Join(root, "repo"), filepath.Join(root, "home"))
	} else {
		defer os.RemoveAll(root)
	}
	home, repo := filepath.Join(root, "home"), filepath.Join(root, "repo")
	if err := demoRepo(ctx, repo); err != nil {
		return err
	}

	// The scripted model server, owned here and joined before return.
	script, err := llmtest.ParseScript("demo script", demoScript)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("starting the scripted model server: %w", err)
	}
	srvCtx, stopSrv := context.WithCancel(context.WithoutCancel(ctx))
	var srv sync.WaitGroup
	srv.Go(func() { llmtest.ServeListener(srvCtx, ln, script, nil) })
	defer func() { stopSrv(); srv.Wait() }()
	url := "http://" + ln.Addr().String()

	env := map[string]string{"NEURAPHAGE_HOME": home, "NEURAPHAGE_DEMO_API_KEY": "demo"}
	getenv := func(k string) string { return env[k] }
	p, err := config.ResolvePaths(getenv)
	if err != nil {
		return err
	}
	cfg := config.Default()
	cfg.Executor.MaxConcurrent = 3
	an := &cfg.LLM.Providers.Anthropic
	an.BaseURL, an.APIKeyEnv = url, "NEURAPHAGE_DEMO_API_KEY"
	for _, t := range []*string{&cfg.LLM.Tiers.Router.Provider, &cfg.LLM.Tiers.Worker.Provider, &cfg.LLM.Tiers.Expert.Provider} {
		*t = "anthropic"
	}
	cfg.LLM.Tiers.Worker.Model = "claude-sonnet-4-5"
	demoEngineConfig(&cfg, url, "NEURAPHAGE_DEMO_API_KEY")
	cfg.LLM.Retry.BaseDelayMs, cfg.LLM.Retry.MaxDelayMs = 50, 200
	cfg.Merge.AuthorName, cfg.Merge.AuthorEmail = "Neuraphage Demo", "demo@neuraphage.invalid"
	// Main moves under the running tasks (a teammate's commit, and each
	// landing): the main watcher rebases the tasks it concerns itself.
	cfg.Supervision.MainWatcher.NotificationUrgency = "blocking"

	fmt.Fprintf(out, "Neuraphage demo: eight agents on one repository, offline\n")
	fmt.Fprintf(out, "  repository  %s (a scratch git repository)\n", repo)
	fmt.Fprintf(out, "  home        %s\n", home)
	fmt.Fprintf(out, "  model       the scripted model server at %s (Anthropic wire format; no key, no network)\n\n", url)

	var ids []task.ID
	var before []int
	err = a.withDemoDaemon(ctx, p, cfg, getenv, func(c *client.Client) error {
		var err error
		ids, err = demoScene(ctx, c, repo, out)
		if err != nil {
			return err
		}
		d, err := demoWatcher(ctx, c, repo, out)
		if err != nil {
			return err
		}
		ids = append(ids, d)
		more, err := demoSyncer(ctx, c, repo, out)
		if err != nil {
			return err
		}
		ids = append(ids, more...)
		if err := demoSummary(ctx, c, ids, repo, out); err != nil {
			return err
		}
		more, err = demoEngines(ctx, c, repo, out)
		if err != nil {
			return err
		}
		ids = append(ids, more...)
		before, err = demoConversations(ctx, c, ids)
		return err
	})
	if err != nil {
		return err
	}
	return a.withDemoDaemon(ctx, p, cfg, getenv, func(c *client.Client) error {
		return demoRestart(ctx, c, ids, before, out)
	})
}

// demoConversations is the length of each task's stored conversation.
func demoConversations(ctx context.Context, c *client.Client, ids []task.ID) ([]int, error) {
	n := make([]int, len(ids))
	for i, id := range ids {
		lg, err := c.TaskLog(ctx, string(id), 0)
		if err != nil {
			return nil, err
		}
		n[i] = len(lg.Entries)
	}
	return n, nil
}

// withDemoDaemon runs a daemon in this process for the length of fn. The
// daemon goroutine is joined before it returns.
func (a *app) withDemoDaemon(ctx context.Context, p config.Paths, cfg config.Config, getenv func(string) string, fn func(*client.Client) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- a.env.RunDaemon(ctx, p, cfg, getenv, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		return fmt.Errorf("starting the demo daemon: %w", err)
	}
	c := client.New(p.Socket)
	defer c.Close()
	err := fn(c)
	cancel()
	return errors.Join(err, <-done)
}

// demoRepo makes the scratch repository the agents work on.
func demoRepo(ctx context.Context, dir string) error {
	files := map[string]string{
		"README.md":        "# greeter\n\nA tiny program that greets people.\n",
		"src/greeting.txt": "Hello.\n",
		"config.ini":       "[greeting]\nname = world\nloud = false\n\n[internal]\ncache_dir = /tmp/greeter\n",
		"check.sh":         "#!/bin/sh\n# The release check: VERSION names the release.\nv=$(cat VERSION) || { echo \"FAIL $(date +%T) pid $$: no version\"; exit 1; }\necho \"ok: release $v\"\n",
		"auth/jwt.sh":      "#!/bin/sh\n# The project's JWT library, as far as the demo needs it: it verifies a\n# token's claims (a JSON file).\nt=$(cat \"$1\") || exit 2\ncase $t in\n*'\"iat\"'*) echo \"jwt: token accepted\" ;;\n*) echo \"jwt: token rejected: missing required claim iat (issued-at)\" >&2; exit 1 ;;\nesac\n",
		"ui/login.html":    "<form id=\"login\"><input name=\"user\"><input name=\"password\" type=\"password\"></form>\n",
	}
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return err
		}
	}
	id := []string{"-c", "user.name=Neuraphage Demo", "-c", "user.email=demo@neuraphage.invalid", "-c", "commit.gpgsign=false"}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "."},
		append(id, "commit", "-q", "-m", "greeter: first version"),
	} {
		if _, err := git.Run(ctx, dir, args...); err != nil {
			return fmt.Errorf("making the scratch repository (is git installed?): %w", err)
		}
	}
	return nil
}

// demoTeammate commits to main in the repository's checkout, as a
// teammate would: a change to README.md's first line, away from the lines
// the tasks edit.
func demoTeammate(ctx context.Context, repo string) error {
	path := filepath.Join(repo, "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	body := strings.Replace(string(b), "# greeter\n", "# greeter, the friendly greeting tool\n", 1)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		return err
	}
	_, err = git.Run(ctx, repo, "-c", "user.name=A Teammate", "-c", "user.email=teammate@neuraphage.invalid", "-c", "commit.gpgsign=false",
		"commit", "-qam", "README: name the project")
	return err
}

type demoTask struct {
	desc string
	tags []string
	prio int
}

var demoTasks = []demoTask{
	{"Make the greeting friendlier", []string{"ui"}, 1},
	{"Add a changelog entry for the release", []string{"docs", "release"}, 2},
	{"Document the configuration keys", []string{"docs"}, 2},
}

// demoScene runs the three tasks and prints the live timeline until all have
// finished. It answers the question one task asks and sends another a
// message mid-run.
func demoScene(ctx context.Context, c *client.Client, repo string, out io.Writer) ([]task.ID, error) {
	stream, err := c.Watch(ctx, event.Query{AfterID: -1})
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	var ids []task.ID
	names := map[task.ID]string{}
	for i, d := range demoTasks {
		prio := d.prio
		t, err := c.CreateTask(ctx, api.CreateTaskRequest{Description: d.desc, Tags: d.tags, Priority: &prio, Repo: repo})
		if err != nil {
			return nil, err
		}
		ids = append(ids, t.ID)
		names[t.ID] = string(rune('A' + i))
		fmt.Fprintf(out, "• created %s (%s) %q\n", t.ID, names[t.ID], t.Description)
	}
	fmt.Fprintf(out, "\nLive, from the event stream (A, B, C run at once; 3 slots):\n")
	start := time.Now()
	line := func(id task.ID, s string) {
		fmt.Fprintf(out, "  %5.2fs  %s %s  %s\n", time.Since(start).Seconds(), id, names[id], s)
	}
	say := func(s string) { fmt.Fprintf(out, "  %5.2fs  %s\n", time.Since(start).Seconds(), s) }

	// A task is done once it reached a terminal status and, when it
	// completed, its worktree was cleaned up after its work landed.
	done := map[task.ID]bool{}
	pending := map[task.ID]bool{}
	sent := false
	var pushed time.Time // when the teammate's commit landed on main
	for len(done) < len(ids) || len(pending) > 0 {
		e, err := stream.Next()
		if err != nil {
			return nil, fmt.Errorf("watching the demo: %w", err)
		}
		if p, ok := e.Payload.(event.MainUpdated); ok && p.Repo == repo {
			say(describeEvent(e))
			continue
		}
		if names[e.TaskID] == "" {
			continue
		}
		switch p := e.Payload.(type) {
		case event.TaskStatus:
			line(e.TaskID, describeEvent(e))
			if p.To.Terminal() {
				done[e.TaskID] = true
			}
			if p.To == task.Completed {
				pending[e.TaskID] = true
			}
		case event.ToolCall:
			line(e.TaskID, fmt.Sprintf("→ %s %s", p.Name, truncate(string(p.Args), 70)))
			if !sent && e.TaskID == ids[0] {
				// Tell A something while it works: it reaches the model at
				// A's next turn boundary, with a receipt.
				sent = true
				if _, err := c.Send(ctx, string(ids[0]), "keep it under 40 characters"); err != nil {
					return nil, err
				}
				say(fmt.Sprintf("you → %s: \"keep it under 40 characters\" (task send; queued for its next turn)", ids[0]))
			}
		case event.FileChanged:
			line(e.TaskID, describeEvent(e))
			if pushed.IsZero() && e.TaskID == ids[1] && p.Path == "README.md" {
				// While B has README.md open, a teammate commits to main:
				// the main watcher tells B at once and rebases it at its
				// next tool boundary, carrying B's uncommitted edit.
				pushed = time.Now()
				if err := demoTeammate(ctx, repo); err != nil {
					return nil, err
				}
				say("a teammate commits to main: \"README: name the project\" (B has README.md changed, uncommitted)")
			}
		case event.PersonaSelected:
			line(e.TaskID, describeEvent(e))
		case event.RebaseRequired:
			if pushed.IsZero() {
				// An fyi note about an earlier move (a merge landing),
				// before the teammate's commit: no delay to show.
				line(e.TaskID, describeEvent(e))
				break
			}
			line(e.TaskID, fmt.Sprintf("%s (%s after the commit)", describeEvent(e), time.Since(pushed).Round(time.Millisecond)))
		case event.ToolResult, event.Delivered, event.Learning, event.Completed, event.Failed, event.Interrupted,
			event.WorktreeCreated, event.CommitMade, event.MergeQueued, event.MergeLanded, event.MergeConflicted,
			event.RebaseCompleted, event.RebaseConflict:
			line(e.TaskID, describeEvent(e))
		case event.WorktreeRemoved:
			line(e.TaskID, describeEvent(e))
			delete(pending, e.TaskID)
		case event.TurnEnded:
			if p.Attempts > 1 {
				line(e.TaskID, fmt.Sprintf("turn %d needed %d attempts: the model was overloaded once and the call was retried", p.Turn, p.Attempts))
			}
		case event.NeedsInput:
			line(e.TaskID, "? "+p.Question)
			answer := "Only the public ones."
			if _, err := c.Send(ctx, string(e.TaskID), answer); err != nil {
				return nil, err
			}
			say(fmt.Sprintf("you → %s: %q (task send; the waiting task resumes)", e.TaskID, answer))
		}
	}
	return ids, nil
}

func demoSummary(ctx context.Context, c *client.Client, ids []task.ID, repo string, out io.Writer) error {
	fmt.Fprintf(out, "\nSummary:\n")
	tw := newTable(out)
	fmt.Fprintln(tw, "  TASK\tSTATUS\tCALLS\tTOKENS\tCOST\tRESULT")
	for _, id := range ids {
		d, err := c.GetTask(ctx, string(id))
		if err != nil {
			return err
		}
		t := d.Task
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t$%.4f\t%s\n", t.ID, t.Status, t.Usage.Iterations, tokens(t.Usage), t.Usage.CostUSD, truncate(t.CloseReason, 60))
	}
	tw.Flush()
	history, err := git.Run(ctx, repo, "log", "--oneline", "--graph", "main")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nmain now: every task's work landed through the merge queue (git log --oneline --graph main):\n")
	for _, l := range strings.Split(strings.TrimRight(history, "\n"), "\n") {
		fmt.Fprintf(out, "  %s\n", l)
	}
	status, err := git.Run(ctx, repo, "status", "--short")
	if err != nil {
		return err
	}
	if strings.TrimSpace(status) == "" {
		status = "(clean: the checkout of main was fast-forwarded; nothing of yours is touched)"
	}
	fmt.Fprintf(out, "\nThe repository's checkout (git status --short): %s\n", strings.TrimSpace(status))
	wts, err := c.Worktrees(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nWorktrees (neuraphage worktree list):\n")
	for _, w := range wts {
		fmt.Fprintf(out, "  %s  %-7s  %s  %s\n", w.TaskID, w.State, w.Branch, w.Path)
	}
	rep, err := c.Costs(ctx, api.CostQuery{By: api.CostByModel})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nCost ledger by model (neuraphage cost --by model):\n")
	for _, r := range rep.Rows {
		fmt.Fprintf(out, "  %-32s %3d calls  %7s tokens  $%.4f\n", r.Key, r.Calls, count(r.InputTokens+r.OutputTokens+r.CacheReadTokens+r.CacheWriteTokens), r.CostUSD)
	}
	fmt.Fprintf(out, "  (priced from the built-in catalogue as if the scripted model were each tier's model: the router persona on haiku, the workers on sonnet)\n")
	return nil
}

// demoRestart shows that every task came back from the store with its
// whole conversation: before holds each one's length before the restart.
// How long a conversation is depends on when the notices of main's moves
// reached it, so the check is against before, not a fixed number.
func demoRestart(ctx context.Context, c *client.Client, ids []task.ID, before []int, out io.Writer) error {
	ts, err := c.ListTasks(ctx, nil, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n• restarted the daemon: %d tasks back from the store\n", len(ts))
	after, err := demoConversations(ctx, c, ids)
	if err != nil {
		return err
	}
	for i, id := range ids {
		if after[i] != before[i] {
			return fmt.Errorf("demo: %s had %d messages before the restart and %d after", id, before[i], after[i])
		}
		fmt.Fprintf(out, "    %s  conversation of %d messages, as before the restart (neuraphage task log %s)\n", id, after[i], id)
	}
	return nil
}

// demoWatcher runs D, a task that loops on a failing command, and prints
// its timeline: the Watcher finds the loop with its evidence, asks the
// watcher persona, nudges D with a specific hint, and D recovers.
func demoWatcher(ctx context.Context, c *client.Client, repo string, out io.Writer) (task.ID, error) {
	stream, err := c.Watch(ctx, event.Query{AfterID: -1})
	if err != nil {
		return "", err
	}
	defer stream.Close()
	prio := 2
	t, err := c.CreateTask(ctx, api.CreateTaskRequest{Description: "Make the release check pass", Persona: "junior", Priority: &prio, Repo: repo})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(out, "\nThe Watcher: a task that loops on a failing command\n• created %s (D) %q\n", t.ID, t.Description)
	start := time.Now()
	line := func(s string) { fmt.Fprintf(out, "  %5.2fs  %s D  %s\n", time.Since(start).Seconds(), t.ID, s) }
	shown := false
	for landed := false; !landed; {
		e, err := stream.Next()
		if err != nil {
			return "", fmt.Errorf("watching the demo: %w", err)
		}
		if e.TaskID != t.ID {
			continue
		}
		switch p := e.Payload.(type) {
		case event.ToolCall:
			line(fmt.Sprintf("→ %s %s", p.Name, truncate(string(p.Args), 70)))
		case event.TaskStatus:
			line(describeEvent(e))
			if p.To.Terminal() && p.To != task.Completed {
				return "", fmt.Errorf("task D ended %s: %s", p.To, p.Reason)
			}
		case event.WorktreeRemoved:
			line(describeEvent(e))
			landed = true
		case event.ToolResult, event.FileChanged, event.Delivered, event.MergeLanded:
			line(describeEvent(e))
		case event.WatcherNudge:
			line(describeEvent(e))
			line(fmt.Sprintf("    the nudge: %q", truncate(p.Message, 140)))
		case event.HealthCheck, event.WatcherEscalate, event.WatcherPause, event.WatcherAbort:
			line(describeEvent(e))
			if !shown { // the evidence once: the steps that matched
				for _, ev := range watcherEvidence(e.Payload) {
					line("    evidence " + evidenceLine(ev))
					shown = true
				}
			}
		}
	}
	return t.ID, nil
}
