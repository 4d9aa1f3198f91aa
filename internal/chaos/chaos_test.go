//go:build chaos

package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

var (
	flagSeed     = flag.Int64("chaos.seed", 0, "seed of the kills, latencies and messages (0: $NEURAPHAGE_CHAOS_SEED, else a new one)")
	flagDuration = flag.Duration("chaos.duration", 0, "how long the daemon is killed at random (0: $NEURAPHAGE_CHAOS_DURATION, else 60s)")
	flagTasks    = flag.Int("chaos.tasks", 20, "tasks run at once")
	flagFinish   = flag.Duration("chaos.finish", 150*time.Second, "how long the tasks have to finish once the kills stop")
)

// The names of the invariants, as failures print them.
const (
	invFinish   = "finish"   // every task finishes (completed: landed)
	invMessage  = "message"  // every acknowledged message reached the model or was reported back
	invOnce     = "once"     // no tool call ran twice (marker lines)
	invMain     = "main"     // every task's work is on main, nothing twice
	invOrphan   = "orphan"   // no process of a dead run outlives the next start
	invWorktree = "worktree" // no worktree left registered or on disk
	invDaemon   = "daemon"   // the daemon starts after every kill and never dies on its own
)

// keyEnv carries the scripted model's API key (any key is accepted).
const keyEnv = "NEURAPHAGE_CHAOS_API_KEY"

// sleepSecs is how long one tool call of every task sleeps in a process the
// shell forks (a grandchild of the daemon): long enough that a kill during
// it leaves a process that outlives the restart unless it is stopped.
const sleepSecs = 20

// orphanGrace is how long a restarted daemon has to stop what its dead
// predecessor started.
const orphanGrace = 10 * time.Second

type violation struct{ inv, detail string }

// run is one chaos run: its scratch directory, daemon and records.
type run struct {
	t      *testing.T
	seed   int64
	root   string // scratch directory; every process of the run works under it
	bin    string
	repo   string
	env    []string
	paths  config.Paths
	srv    *llmtest.Server
	tokens []string // per task: "chaos-task-NN"
	ids    []task.ID

	mu         sync.Mutex
	violations []violation
	sent       []sentMessage // acknowledged messages

	d        *daemon
	kills    int
	starts   int
	orphans  int
	attempts int // messages tried
}

type sentMessage struct {
	task int
	id   int64
	text string
}

func (r *run) fail(inv, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.violations = append(r.violations, violation{inv, fmt.Sprintf(format, args...)})
}

func seedAndDuration(t *testing.T) (int64, time.Duration) {
	seed := *flagSeed
	if seed == 0 {
		if v := os.Getenv("NEURAPHAGE_CHAOS_SEED"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("NEURAPHAGE_CHAOS_SEED=%q: %v", v, err)
			}
			seed = n
		}
	}
	if seed == 0 {
		seed = time.Now().UnixNano()%1_000_000_000 + 1
	}
	dur := *flagDuration
	if dur == 0 {
		dur = 60 * time.Second
		if v := os.Getenv("NEURAPHAGE_CHAOS_DURATION"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("NEURAPHAGE_CHAOS_DURATION=%q: %v", v, err)
			}
			dur = d
		}
	}
	return seed, dur
}

// TestChaos runs the tasks while the daemon is killed at random, then
// checks every invariant and reports each one broken with the seed.
func TestChaos(t *testing.T) {
	seed, dur := seedAndDuration(t)
	ntasks := *flagTasks
	t.Logf("chaos: seed %d, %s of kills, %d tasks (replay: go test -tags chaos -run TestChaos ./internal/chaos/ -chaos.seed %d -chaos.duration %s)",
		seed, dur, ntasks, seed, dur)
	r := &run{t: t, seed: seed}
	r.setup(ntasks)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	r.d = r.start(ctx)
	t.Cleanup(func() {
		if r.d != nil {
			r.d.kill()
		}
	})

	// The chaos: kills on the test's goroutine; tasks created over the
	// first 60% of it and messages sent all through it, each by a
	// goroutine of its own, joined before the checks.
	chaosCtx, stopChaos := context.WithTimeout(ctx, dur)
	var clients sync.WaitGroup
	t.Cleanup(func() { cancel(); clients.Wait() }) // also when a start fails the test
	clients.Go(func() { r.createTasks(ctx, rand.New(rand.NewPCG(uint64(seed), 4)), dur*6/10) })
	clients.Go(func() { r.sendMessages(chaosCtx, rand.New(rand.NewPCG(uint64(seed), 2))) })
	r.killLoop(chaosCtx, rand.New(rand.NewPCG(uint64(seed), 1)))
	stopChaos()
	clients.Wait()
	if slices.Contains(r.ids, "") {
		r.fail(invDaemon, "not every task could be created: %v", r.ids)
		r.report()
		t.FailNow()
	}

	r.awaitFinish(ctx, *flagFinish)
	fig := r.check(ctx)
	fig.print(t)
	r.report()
	if t.Failed() {
		t.Logf("replay: go test -tags chaos -v -run TestChaos ./internal/chaos/ -chaos.seed %d -chaos.duration %s", seed, dur)
	} else {
		os.RemoveAll(r.root)
	}
}

func (r *run) setup(ntasks int) {
	t := r.t
	root, err := os.MkdirTemp("", "np-chaos")
	if err != nil {
		t.Fatal(err)
	}
	r.root = root
	r.bin = filepath.Join(root, "neuraphage")
	build := exec.Command("go", "build", "-o", r.bin, "github.com/neuraphage/neuraphage-go/cmd/neuraphage")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building neuraphage: %v\n%s", err, out)
	}
	r.repo = filepath.Join(root, "repo")
	userHome := filepath.Join(root, "user")
	for _, d := range []string{r.repo, userHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.git("init", "-q", "-b", "main")
	r.git("config", "user.name", "Chaos")
	r.git("config", "user.email", "chaos@localhost")
	if err := os.WriteFile(filepath.Join(r.repo, "README.md"), []byte("# chaos\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.git("add", "README.md")
	r.git("commit", "-q", "-m", "initial")
	// Hooks that hold two narrow windows open a little longer, so that
	// kills land in them: a checkout (the merge queue's rebase starts with
	// one) and the archiving of a landed task's branch (cleanup after a
	// landing). They slow nothing else.
	for name, body := range map[string]string{
		"post-checkout":         "#!/bin/sh\nsleep 0.3\n",
		"reference-transaction": "#!/bin/sh\n[ \"$1\" = prepared ] || { cat >/dev/null; exit 0; }\nif grep ' refs/neuraphage/archive/' >/dev/null; then sleep 0.5; fi\nexit 0\n",
	} {
		if err := os.MkdirAll(filepath.Join(r.repo, ".git", "hooks"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.repo, ".git", "hooks", name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	rng := rand.New(rand.NewPCG(uint64(r.seed), 3))
	script := &llmtest.Script{Default: &llmtest.Conversation{Name: "other", Steps: []llmtest.Step{{Text: "Nothing to add."}}}}
	for i := range ntasks {
		tok := fmt.Sprintf("chaos-task-%02d", i)
		r.tokens = append(r.tokens, tok)
		r.ids = append(r.ids, "")
		script.Conversations = append(script.Conversations, taskConversation(i, tok, rng))
	}
	r.srv = llmtest.NewServer(t, script)

	home := filepath.Join(root, "home")
	r.paths, err = config.ResolvePaths(func(k string) string { return map[string]string{"NEURAPHAGE_HOME": home}[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Executor.MaxConcurrent = ntasks
	cfg.Agent.MaxIterations = max(cfg.Agent.MaxIterations, 40)
	an := &cfg.LLM.Providers.Anthropic
	an.BaseURL, an.APIKeyEnv, an.MaxConcurrent = r.srv.URL(), keyEnv, ntasks
	for _, tier := range []*string{&cfg.LLM.Tiers.Router.Provider, &cfg.LLM.Tiers.Worker.Provider, &cfg.LLM.Tiers.Expert.Provider} {
		*tier = "anthropic"
	}
	cfg.LLM.Tiers.Worker.Model = "claude-sonnet-4-5"
	cfg.LLM.Retry.BaseDelayMs, cfg.LLM.Retry.MaxDelayMs = 50, 500
	data, err := config.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(r.paths.ConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.paths.ConfigFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r.env = []string{"NEURAPHAGE_HOME=" + home, keyEnv + "=scripted", "HOME=" + userHome, "PATH=" + os.Getenv("PATH")}
	if v := os.Getenv("TMPDIR"); v != "" {
		r.env = append(r.env, "TMPDIR="+v)
	}
}

// padding is how many times a task's script says complete_task, so that a
// task given more turns by late messages completes again.
const padding = 30

// taskConversation is what task i's model says. Every tool call appends
// its own line to chaos/tNN.markers in the worktree, so a call run twice
// shows as a line twice on main. The first call writes a file, the second
// commits it, the third sleeps in a forked process, the fourth writes
// another file, then the task completes. The marker is the last thing a
// call does, so a marker proves the call's effect (the sleep's marker
// comes first: the sleep has no effect, and is the call a kill most
// often interrupts).
func taskConversation(i int, tok string, rng *rand.Rand) llmtest.Conversation {
	n := fmt.Sprintf("t%02d", i)
	mark := func(s int) string { return fmt.Sprintf("echo %s-s%d >> chaos/%s.markers", n, s, n) }
	cmds := []string{
		"mkdir -p chaos && echo 'first file of " + n + "' > chaos/" + n + "-a.txt && " + mark(0),
		"git add chaos && git commit -q -m 'chaos " + n + " step 1' && " + mark(1),
		mark(2) + fmt.Sprintf(" && sleep %d; echo slept", sleepSecs),
		"echo 'second file of " + n + "' > chaos/" + n + "-b.txt && " + mark(3),
	}
	c := llmtest.Conversation{Name: n, Match: llmtest.Match{User: regexpQuote(tok) + `\b`}}
	for s, cmd := range cmds {
		c.Steps = append(c.Steps, llmtest.Step{
			Text:      fmt.Sprintf("Step %d of %s.", s, n),
			LatencyMs: 50 + rng.IntN(600),
			ToolCalls: []llmtest.ToolCall{{ID: fmt.Sprintf("toolu_%s_s%d", n, s), Name: "bash",
				Input: map[string]any{"command": cmd, "timeout": sleepSecs + 60}}},
		})
	}
	for s := len(cmds); s < len(cmds)+padding; s++ {
		c.Steps = append(c.Steps, llmtest.Step{
			Text:      "Done.",
			LatencyMs: 50 + rng.IntN(600),
			ToolCalls: []llmtest.ToolCall{{ID: fmt.Sprintf("toolu_%s_s%d", n, s), Name: "complete_task",
				Input: map[string]any{"summary": "chaos " + n + " done"}}},
		})
	}
	return c
}

func regexpQuote(s string) string { return strings.ReplaceAll(s, "-", `\-`) }

func (r *run) git(args ...string) string {
	r.t.Helper()
	out, err := r.gitErr(args...)
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (r *run) gitErr(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.repo
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+filepath.Join(r.root, "user"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// daemon is one daemon process of the run.
type daemon struct {
	cmd  *exec.Cmd
	c    *client.Client
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // valid once done is closed
}

func (d *daemon) kill() {
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
	d.c.Close()
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// start starts a daemon and returns once it answers; a daemon that does not
// is fatal, as nothing else can be checked.
func (r *run) start(ctx context.Context) *daemon {
	r.t.Helper()
	r.starts++
	logf, err := os.Create(filepath.Join(r.root, fmt.Sprintf("daemon-%03d.out", r.starts)))
	if err != nil {
		r.t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(r.bin, "daemon", "start", "--foreground")
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = r.env, r.root, logf, logf
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("starting the daemon: %v", err)
	}
	d := &daemon{cmd: cmd, c: client.New(r.paths.Socket), done: make(chan struct{})}
	go func() { d.err = cmd.Wait(); close(d.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		h, err := d.c.Health(hctx)
		cancel()
		if err == nil && h.PID == cmd.Process.Pid {
			return d
		}
		if d.exited() || time.Now().After(deadline) {
			d.kill()
			out, _ := os.ReadFile(logf.Name())
			r.fail(invDaemon, "start %d: the daemon did not come up (%v, last error %v); its output:\n%s", r.starts, d.err, err, tail(string(out), 2000))
			r.report()
			r.t.FailNow()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reportMax is how many violations of one invariant are printed in full.
const reportMax = 8

// report fails the test with the violations so far, grouped by invariant:
// a count, then the first reportMax in full.
func (r *run) report() {
	r.mu.Lock()
	defer r.mu.Unlock()
	by := map[string][]string{}
	var order []string
	for _, v := range r.violations {
		if by[v.inv] == nil {
			order = append(order, v.inv)
		}
		by[v.inv] = append(by[v.inv], v.detail)
	}
	for _, inv := range order {
		ds := by[inv]
		var b strings.Builder
		fmt.Fprintf(&b, "invariant %q broken %d time(s) (seed %d):", inv, len(ds), r.seed)
		for _, d := range ds[:min(len(ds), reportMax)] {
			b.WriteString("\n  - " + d)
		}
		if len(ds) > reportMax {
			fmt.Fprintf(&b, "\n  - … and %d more", len(ds)-reportMax)
		}
		r.t.Error(b.String())
	}
	if len(r.violations) > 0 {
		r.t.Logf("scratch kept in %s", r.root)
	}
}

func (r *run) createTasks(ctx context.Context, rng *rand.Rand, window time.Duration) {
	c := client.New(r.paths.Socket)
	defer c.Close()
	offsets := make([]time.Duration, len(r.tokens))
	for i := 1; i < len(offsets); i++ {
		offsets[i] = time.Duration(rng.Int64N(int64(window)))
	}
	slices.Sort(offsets)
	begin := time.Now()
	for i, tok := range r.tokens {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(begin.Add(offsets[i]))):
		}
		desc := fmt.Sprintf("%s: run the four scripted steps and complete", tok)
		for attempt := 0; ; attempt++ {
			if attempt > 0 {
				if id := findTask(ctx, c, desc); id != "" {
					r.setID(i, id)
					break
				}
			}
			// A named persona: the router is not asked, so every request
			// naming the task is its agent's.
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			tk, err := c.CreateTask(cctx, api.CreateTaskRequest{Description: desc, Repo: r.repo, Persona: "mid", NoSupervision: true})
			cancel()
			if err == nil {
				r.setID(i, tk.ID)
				break
			}
			if ctx.Err() != nil {
				return
			}
			if attempt == 300 {
				r.fail(invDaemon, "task %s could not be created in 300 attempts: %v", tok, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func findTask(ctx context.Context, c *client.Client, desc string) task.ID {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tasks, err := c.ListTasks(lctx, nil, true)
	if err != nil {
		return ""
	}
	for _, tk := range tasks {
		if tk.Description == desc {
			return tk.ID
		}
	}
	return ""
}

func (r *run) setID(i int, id task.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids[i] = id
}

// killLoop kills the daemon at random moments and starts it again until
// ctx ends. After each start it checks that nothing the dead daemon
// started is still running once the new one had orphanGrace to stop it.
func (r *run) killLoop(ctx context.Context, rng *rand.Rand) {
	for {
		wait := 50*time.Millisecond + time.Duration(rng.Int64N(int64(3*time.Second)))
		select {
		case <-ctx.Done():
			return
		case <-r.d.done:
			r.fail(invDaemon, "the daemon exited on its own (%v) after start %d", r.d.err, r.starts)
			r.d = r.start(context.Background())
			continue
		case <-time.After(wait):
		}
		r.d.kill()
		r.kills++
		r.d = r.start(context.Background())
		r.checkOrphans(fmt.Sprintf("after kill %d", r.kills))
	}
}

// sendMessages sends a message to a random task at random moments until
// ctx ends, recording those the daemon acknowledged.
func (r *run) sendMessages(ctx context.Context, rng *rand.Rand) {
	c := client.New(r.paths.Socket)
	defer c.Close()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(50*time.Millisecond + time.Duration(rng.Int64N(int64(500*time.Millisecond)))):
		}
		// A task not finished yet, as far as a list says (one that
		// finishes meanwhile makes the send fail, or tests the report).
		r.mu.Lock()
		ids := slices.Clone(r.ids)
		r.mu.Unlock()
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		tasks, err := c.ListTasks(lctx, nil, false)
		cancel()
		var open []int
		for _, tk := range tasks {
			if i := slices.Index(ids, tk.ID); i >= 0 && !tk.Status.Terminal() {
				open = append(open, i)
			}
		}
		if err != nil || len(open) == 0 {
			continue
		}
		slices.Sort(open)
		i := open[rng.IntN(len(open))]
		id := ids[i]
		text := fmt.Sprintf("chaos-msg-%04d for %s: keep going", n, r.tokens[i])
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err := c.SendMessage(sctx, string(id), api.SendRequest{Text: text})
		cancel()
		r.mu.Lock()
		r.attempts++
		if err == nil {
			r.sent = append(r.sent, sentMessage{task: i, id: m.ID, text: text})
		}
		r.mu.Unlock()
	}
}

// cleanupLimit is how long a landed task's worktree may take to be
// removed after the task is completed.
const cleanupLimit = 30 * time.Second

// stuckFor is how long every unfinished task must have been paused, with
// nothing else open, for awaitFinish to stop waiting: a paused task does
// not resume by itself.
const stuckFor = 15 * time.Second

// awaitFinish waits, without kills, until every task is finished, or every
// unfinished one has been paused for stuckFor, or limit has passed.
func (r *run) awaitFinish(ctx context.Context, limit time.Duration) {
	deadline := time.Now().Add(limit)
	var pausedSince time.Time
	for {
		if r.d.exited() {
			r.fail(invDaemon, "the daemon exited on its own (%v) after start %d", r.d.err, r.starts)
			r.d = r.start(ctx)
		}
		tasks, err := r.d.c.ListTasks(ctx, nil, true)
		if err == nil {
			open, paused := 0, 0
			for _, tk := range tasks {
				if slices.Contains(r.ids, tk.ID) && !tk.Status.Terminal() {
					open++
					if tk.Status == task.Paused {
						paused++
					}
				}
			}
			switch {
			case open == 0:
				return
			case paused < open:
				pausedSince = time.Time{}
			case pausedSince.IsZero():
				pausedSince = time.Now()
			case time.Since(pausedSince) > stuckFor:
				return
			}
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// figures are the run's numbers, printed at the end.
type figures struct {
	seed                                  int64
	kills, starts, tasks, completed       int
	msgTried, msgAcked, msgSeen, msgBack  int
	msgWaiting                            int
	toolCalls, commits, orphans, requests int
}

func (f figures) print(t *testing.T) {
	line := fmt.Sprintf("chaos figures: seed %d, kills %d, starts %d, tasks %d (completed %d), messages tried %d, acknowledged %d, seen by the model %d, reported back %d, waiting on an unfinished task %d, tool calls %d (marker lines), chaos commits on main %d, orphan processes %d, model requests %d",
		f.seed, f.kills, f.starts, f.tasks, f.completed, f.msgTried, f.msgAcked, f.msgSeen, f.msgBack, f.msgWaiting, f.toolCalls, f.commits, f.orphans, f.requests)
	t.Log(line)
	fmt.Println(line)
}

// check checks every invariant and returns the run's figures.
func (r *run) check(ctx context.Context) figures {
	f := figures{seed: r.seed, kills: r.kills, starts: r.starts, tasks: len(r.ids), msgTried: r.attempts, msgAcked: len(r.sent)}
	c := r.d.c

	// finish
	tasks, err := c.ListTasks(ctx, nil, true)
	if err != nil {
		r.t.Fatalf("listing tasks: %v", err)
	}
	status := map[task.ID]task.Summary{}
	for _, tk := range tasks {
		status[tk.ID] = tk
	}
	for i, id := range r.ids {
		tk := status[id]
		if tk.Status == task.Completed {
			f.completed++
			continue
		}
		detail := ""
		if d, err := c.GetTask(ctx, string(id)); err == nil {
			b, _ := json.Marshal(d.Task)
			detail = tail(string(b), 600)
		}
		r.fail(invFinish, "%s (%s) is %s when the wait ended (every task finished, or every unfinished one paused for %s, or -chaos.finish %s passed): %s",
			id, r.tokens[i], tk.Status, stuckFor, *flagFinish, detail)
	}

	// message
	reqs := r.srv.Requests()
	f.requests = len(reqs)
	for _, m := range r.sent {
		if seenByModel(reqs, r.tokens[m.task], m.text) {
			f.msgSeen++
			continue
		}
		if r.reportedBack(ctx, r.ids[m.task], m) {
			f.msgBack++
			continue
		}
		id := r.ids[m.task]
		where := "not among its pending messages either"
		if d, err := c.GetTask(ctx, string(id)); err == nil {
			for _, p := range d.Pending {
				if p.ID == m.id {
					where = fmt.Sprintf("still queued (delivered_at %v) on a %s task", p.DeliveredAt, d.Task.Status)
				}
			}
			if !d.Task.Status.Terminal() && strings.HasPrefix(where, "still queued") {
				// It waits for a task that has not ended (reported
				// under finish): not lost.
				f.msgWaiting++
				continue
			}
		}
		r.fail(invMessage, "message #%d %q to %s (%s) was acknowledged but never reached the model nor was reported back: %s",
			m.id, m.text, id, r.tokens[m.task], where)
	}

	// worktree (registry, as the daemon sees it). A task is completed when
	// it lands; its cleanup follows, so give that time before judging.
	var wts []api.Worktree
	deadline := time.Now().Add(cleanupLimit)
	for {
		wts, err = c.Worktrees(ctx)
		if err != nil {
			r.fail(invWorktree, "listing worktrees: %v", err)
			break
		}
		left := 0
		for _, w := range wts {
			if status[w.TaskID].Status == task.Completed && (w.State != api.WorktreeRemoved || w.Exists) {
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	landed := map[task.ID]string{}
	for _, w := range wts {
		if !slices.Contains(r.ids, w.TaskID) {
			if w.TaskID == "" {
				r.fail(invWorktree, "a stray worktree at %s on %s", w.Path, w.Branch)
			}
			continue
		}
		landed[w.TaskID] = w.Landed
		if status[w.TaskID].Status == task.Completed && (w.State != api.WorktreeRemoved || w.Exists) {
			r.fail(invWorktree, "%s landed but its worktree is %s (exists %t, note %q, in progress %q) at %s", w.TaskID, w.State, w.Exists, w.Note, w.InProgress, w.Path)
		}
	}

	// Stop the daemon in order; what remains is checked with it gone.
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	if err := c.Shutdown(sctx); err != nil && !errors.Is(err, client.ErrUnreachable) {
		r.fail(invDaemon, "asking the daemon to stop: %v", err)
	}
	select {
	case <-r.d.done:
	case <-sctx.Done():
		r.fail(invDaemon, "the daemon did not stop within 60s of a shutdown request")
	}
	cancel()
	r.d.kill()
	r.d = nil

	// worktree (git and disk)
	// No lock file a killed git left: the last start cleared them.
	if locks, err := git.LockFiles(filepath.Join(r.repo, ".git")); err != nil {
		r.fail(invWorktree, "listing git's lock files: %v", err)
	} else {
		for _, l := range locks {
			r.fail(invWorktree, "git lock file %s left (modified %s)", l.Path, l.ModTime.UTC().Format(time.RFC3339Nano))
		}
	}
	// Those of unfinished tasks are reported under finish.
	for _, line := range strings.Split(r.git("worktree", "list", "--porcelain"), "\n") {
		p, ok := strings.CutPrefix(line, "worktree ")
		if !ok || p == r.repo {
			continue
		}
		id := task.ID(filepath.Base(p))
		if st := status[id].Status; !slices.Contains(r.ids, id) || st == task.Completed {
			r.fail(invWorktree, "git still has the worktree %s registered (its task is %q)", p, st)
		}
	}
	for _, id := range r.ids {
		if status[id].Status != task.Completed {
			continue
		}
		p := filepath.Join(r.root, ".neuraphage-worktrees", string(id))
		if _, err := os.Stat(p); err == nil {
			r.fail(invWorktree, "%s landed but its directory %s is still there", id, p)
		}
	}

	// main and once
	f.commits, f.toolCalls = r.checkMain(status, landed)

	// orphan: with the daemon stopped in order, nothing of the run runs.
	r.checkOrphans("after the daemon stopped")
	f.orphans = r.orphans
	return f
}

// checkMain checks main's history and files: each task's landed commit is
// on main, no commit subject twice, every marker line once.
func (r *run) checkMain(status map[task.ID]task.Summary, landed map[task.ID]string) (commits, toolCalls int) {
	subjects := strings.Split(strings.TrimSpace(r.git("log", "main", "--format=%s")), "\n")
	count := map[string]int{}
	for _, s := range subjects {
		count[s]++
		if strings.HasPrefix(s, "chaos t") {
			commits++
		}
	}
	for s, n := range count {
		if n > 1 {
			r.fail(invMain, "the commit %q is on main %d times", s, n)
		}
	}
	trailers := strings.Fields(r.git("log", "main", "--format=%(trailers:key=Neuraphage-Task,valueonly)"))
	for i, id := range r.ids {
		n := fmt.Sprintf("t%02d", i)
		if k := strings.Count(strings.Join(trailers, " "), string(id)); k > 1 {
			r.fail(invMain, "%s (%s) landed %d commits with its trailer on main", id, n, k)
		}
		if status[id].Status != task.Completed {
			continue
		}
		l := landed[id]
		if l == "" {
			r.fail(invMain, "%s (%s) is completed but its worktree record names no landed commit", id, n)
		} else if _, err := r.gitErr("merge-base", "--is-ancestor", l, "main"); err != nil {
			r.fail(invMain, "%s (%s) landed as %s, which is not on main", id, n, l)
		}
		// What the task's branch held when it landed (its archived tip)
		// is on main, file for file: the task's files are its own.
		if tip, err := r.gitErr("rev-parse", "-q", "--verify", "refs/neuraphage/archive/"+string(id)); err == nil {
			tip = strings.TrimSpace(tip)
			for _, f := range []string{n + ".markers", n + "-a.txt", n + "-b.txt"} {
				onBranch, berr := r.gitErr("show", tip+":chaos/"+f)
				onMain, merr := r.gitErr("show", "main:chaos/"+f)
				if berr == nil && (merr != nil || onMain != onBranch) {
					r.fail(invMain, "%s (%s): chaos/%s on its landed branch (%s) is not on main as it was", id, n, f, tip[:10])
				}
			}
		}
		// A task whose first call a kill interrupted may have written
		// nothing at all: no markers is then no calls.
		markers, err := r.gitErr("show", "main:chaos/"+n+".markers")
		if err != nil {
			markers = ""
		}
		lines := map[string]int{}
		sc := bufio.NewScanner(strings.NewReader(markers))
		for sc.Scan() {
			lines[sc.Text()]++
			toolCalls++
		}
		for l, k := range lines {
			if k > 1 {
				r.fail(invOnce, "%s (%s): tool call %q ran %d times (chaos/%s.markers on main:\n%s)", id, n, l, k, n, markers)
			}
		}
		if lines[n+"-s1"] == 1 && count["chaos "+n+" step 1"] != 1 {
			r.fail(invMain, "%s (%s): its step-1 commit is on main %d times though its tool call ran", id, n, count["chaos "+n+" step 1"])
		}
		if _, err := r.gitErr("cat-file", "-e", "main:chaos/"+n+"-a.txt"); lines[n+"-s0"] == 1 && err != nil {
			r.fail(invMain, "%s (%s): its first file is not on main though its tool call ran", id, n)
		}
		if _, err := r.gitErr("cat-file", "-e", "main:chaos/"+n+"-b.txt"); lines[n+"-s3"] == 1 && err != nil {
			r.fail(invMain, "%s (%s): its second file is not on main though its tool call ran", id, n)
		}
	}
	return commits, toolCalls
}

// seenByModel reports whether a request of the task's conversation carried
// the message's text in a user message (a message taken in before the first
// turn joins the first one).
func seenByModel(reqs []llmtest.Request, tok, text string) bool {
	for _, q := range reqs {
		if len(q.Messages) == 0 || !strings.Contains(q.Messages[0].Text(), tok) {
			continue
		}
		for _, m := range q.Messages {
			if m.Role == llm.RoleUser && strings.Contains(m.Text(), text) {
				return true
			}
		}
	}
	return false
}

// reportedBack reports whether the daemon told of the message as not
// delivered: an event of the task, of a kind about messages returned or
// undelivered (task.messages_returned), naming its text or carrying its id
// in its data under a key "ids" or ending in "_id" or "_ids".
func (r *run) reportedBack(ctx context.Context, id task.ID, m sentMessage) bool {
	evs, err := r.d.c.Events(ctx, event.Query{Filter: event.Filter{TaskID: id}, Limit: 10000})
	if err != nil {
		return false
	}
	for _, e := range evs {
		k := string(e.Kind)
		if !strings.Contains(k, "undeliver") && !strings.Contains(k, "return") {
			continue
		}
		b, _ := json.Marshal(e)
		var doc struct {
			Data any `json:"data"`
		}
		if strings.Contains(string(b), m.text) || json.Unmarshal(b, &doc) == nil && carriesID(doc.Data, "", m.id) {
			return true
		}
	}
	return false
}

// carriesID reports whether v holds the number id under a key "ids" or
// ending in "_id" or "_ids" (at any depth).
func carriesID(v any, key string, id int64) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if carriesID(x, k, id) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if carriesID(x, key, id) {
				return true
			}
		}
	case float64:
		return (key == "ids" || strings.HasSuffix(key, "_id") || strings.HasSuffix(key, "_ids")) && v == float64(id)
	}
	return false
}

// checkOrphans waits up to orphanGrace for every process working under the
// run's directory to be the test's own descendant (the live daemon and what
// it runs); what is left was started by a dead daemon and survived it. Each
// is reported, then killed so that it cannot disturb the rest of the run.
func (r *run) checkOrphans(when string) {
	deadline := time.Now().Add(orphanGrace)
	for {
		left := r.strays()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				r.orphans++
				r.fail(invOrphan, "%s: process %d (%s) in %s outlived the daemon that started it", when, p.pid, p.cmdline, p.cwd)
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type procInfo struct {
	pid     int
	cwd     string
	cmdline string
}

// strays lists the processes whose working directory is under the run's
// directory and that are not descendants of this test process.
func (r *run) strays() []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	var under []procInfo
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at the last ')'.
		s := string(stat)
		if j := strings.LastIndexByte(s, ')'); j >= 0 {
			if f := strings.Fields(s[j+1:]); len(f) >= 2 {
				parent[pid], _ = strconv.Atoi(f[1])
			}
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || (cwd != r.root && !strings.HasPrefix(cwd, r.root+"/")) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		under = append(under, procInfo{pid: pid, cwd: cwd, cmdline: strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))})
	}
	self := os.Getpid()
	var out []procInfo
	for _, p := range under {
		mine := false
		for q, n := p.pid, 0; q > 1 && n < 1000; q, n = parent[q], n+1 {
			if q == self {
				mine = true
				break
			}
		}
		if !mine {
			out = append(out, p)
		}
	}
	return out
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
