package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuraphage/neuraphage-go/internal/agent"
	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/gitserve"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// remoteRun is one run of a task on a worker, as the coordinator keeps
// it. Its Run goroutine does everything the run's messages ask, in their
// order.
type remoteRun struct {
	id     task.ID
	worker string
	epoch  uint64
	secret string
	base   string // the commit the run started from
	dir    string // the task's worktree here
	host   engine.Host
	// moved: the task's branch moved at a boundary (a blocking rebase).
	moved bool

	up    chan jetstream.Msg
	reqs  chan *nats.Msg
	ended chan struct{}

	lostOnce sync.Once
	lostCh   chan struct{}

	applied     uint64
	last        task.Task
	snapshot    string
	snapshotRef string
}

func (r *remoteRun) lose() { r.lostOnce.Do(func() { close(r.lostCh) }) }

// Name implements engine.Engine: the coordinator runs the native engine's
// tasks.
func (c *Coordinator) Name() string { return agent.Name }

// Run implements engine.Engine: it places the task on a worker, sends its
// assignment and serves the worker's side of r.Host until the worker
// reports the outcome, the worker is lost (Stopped: the executor queues the
// task again and the next Run places it with a new epoch) or ctx ends.
func (c *Coordinator) Run(ctx context.Context, r engine.Run) engine.Outcome {
	id := r.Task.ID
	worker, err := c.place(ctx, r.Task)
	if err != nil {
		return engine.Outcome{Status: engine.Stopped}
	}
	defer c.release(worker, id)
	base, err := git.RevParse(ctx, r.Dir, "HEAD")
	if err != nil {
		return c.stopOrFail(ctx, fmt.Errorf("reading the task's worktree: %w", err))
	}
	var prev assignRecord
	if e, err := c.kvA.Get(ctx, string(id)); err == nil {
		_ = json.Unmarshal(e.Value(), &prev)
	}
	if prev.Base != base {
		// The task's branch moved since the last run's snapshot (the merge
		// queue committed it, a rebase): the worktree here holds the work.
		if prev.Snapshot, prev.SnapshotRef, err = c.photograph(ctx, r, base); err != nil {
			return c.stopOrFail(ctx, fmt.Errorf("reading the task's worktree: %w", err))
		}
	}
	rec := assignRecord{Worker: worker, Base: base, Snapshot: prev.Snapshot, SnapshotRef: prev.SnapshotRef}
	b, _ := json.Marshal(rec)
	epoch, err := c.kvA.Put(ctx, string(id), b)
	if err != nil {
		return c.stopOrFail(ctx, fmt.Errorf("recording the assignment: %w", err))
	}
	secret, err := randomToken()
	if err != nil {
		return c.stopOrFail(ctx, err)
	}
	run := &remoteRun{id: id, worker: worker, epoch: epoch, secret: secret, base: base, dir: r.Dir, host: r.Host, last: r.Task,
		up: make(chan jetstream.Msg, 1024), reqs: make(chan *nats.Msg, 16),
		ended: make(chan struct{}), lostCh: make(chan struct{}),
		snapshot: prev.Snapshot, snapshotRef: prev.SnapshotRef}
	// The run's consumer of the task's injections, from the subject's
	// first message: the worker takes what a boundary lists.
	if _, err := c.js.CreateOrUpdateConsumer(ctx, StreamInject, jetstream.ConsumerConfig{
		Name: injConsumer(secret), FilterSubject: injSubject(id), AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: time.Hour, DeliverPolicy: jetstream.DeliverAllPolicy, InactiveThreshold: 10 * time.Minute,
	}); err != nil {
		return c.stopOrFail(ctx, fmt.Errorf("the task's message consumer: %w", err))
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := c.js.DeleteConsumer(dctx, StreamInject, injConsumer(secret)); err != nil {
			c.log.Debug("deleting a run's message consumer", "task_id", id, "err", err)
		}
	}()
	c.mu.Lock()
	c.runs[id] = run
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.runs[id] == run {
			delete(c.runs, id)
		}
		c.mu.Unlock()
		close(run.ended)
	}()
	a := Assignment{Task: r.Task, Epoch: epoch, Worker: worker, Secret: secret, RepoURL: r.Task.Repo, Branch: r.Branch, Base: base,
		Snapshot: prev.Snapshot, SnapshotRef: prev.SnapshotRef, Env: r.Env, Models: c.o.Models, Keys: c.o.Keys}
	if a.Main, err = baseBranch(ctx, r.Task.Repo); err != nil {
		return c.stopOrFail(ctx, err)
	}
	if c.o.Git != nil {
		tok := c.gitToken(worker)
		if tok == "" {
			return c.stopOrFail(ctx, fmt.Errorf("worker %s has no git server token", worker))
		}
		if err := c.o.Git.Assign(ctx, gitserve.Assignment{Task: string(id), Worker: worker, Epoch: epoch, Repo: r.Task.Repo, Base: a.Main}); err != nil {
			return c.stopOrFail(ctx, fmt.Errorf("serving the task's code: %w", err))
		}
		defer func() {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			// Release, not Unassign: when the task was re-assigned
			// since (a later epoch), the next run's service stays.
			if err := c.o.Git.Release(uctx, string(id), epoch); err != nil {
				c.log.Warn("ending the task's code service", "task_id", id, "err", err)
			}
		}()
		a.RepoURL, a.GitToken = gitserve.TaskURL(c.o.GitURL, string(id), epoch), tok
	}
	ab, err := json.Marshal(a)
	if err != nil {
		return c.stopOrFail(ctx, err)
	}
	if _, err := c.js.Publish(ctx, workSubject(worker), ab, jetstream.WithMsgID(string(id)+"."+epochString(epoch))); err != nil {
		return c.stopOrFail(ctx, fmt.Errorf("sending the assignment: %w", err))
	}
	c.record(ctx, id, event.ClusterAssigned{Worker: worker, Epoch: epoch, Snapshot: prev.Snapshot})
	c.log.Info("task assigned", "task_id", id, "worker", worker, "epoch", epoch)
	return c.serve(ctx, r, run)
}

// photograph returns the worktree's uncommitted state as a commit on base
// under neuraphage/<task>/c<n> ("" when there is none), for a worker to
// start from.
func (c *Coordinator) photograph(ctx context.Context, r engine.Run, base string) (commit, ref string, err error) {
	tree, err := git.WorkTreeTree(ctx, r.Dir)
	if err != nil {
		return "", "", err
	}
	out, err := git.Run(ctx, r.Dir, "rev-parse", base+"^{tree}")
	if err != nil {
		return "", "", err
	}
	if tree == strings.TrimSpace(out) {
		return "", "", nil
	}
	commit, err = git.CommitTree(ctx, r.Dir, git.Identity(ctx, r.Dir, "", ""), tree, []string{base},
		fmt.Sprintf("neuraphage: the worktree of %s\n", r.Task.ID))
	if err != nil {
		return "", "", err
	}
	ref = fmt.Sprintf("neuraphage/%s/c%d", r.Task.ID, time.Now().UnixNano())
	if _, err := git.Run(ctx, r.Dir, "update-ref", "refs/heads/"+ref, commit); err != nil {
		return "", "", err
	}
	return commit, ref, nil
}

// baseBranch is the branch the repository's tasks start from, which the
// git server lets workers read.
func baseBranch(ctx context.Context, repo string) (string, error) {
	r, err := git.Inspect(ctx, repo)
	if err != nil {
		return "", err
	}
	return git.DefaultBranch(ctx, r)
}

// stopOrFail ends a run that could not start: Stopped when ctx ended,
// else Failed.
func (c *Coordinator) stopOrFail(ctx context.Context, err error) engine.Outcome {
	if ctx.Err() != nil {
		return engine.Outcome{Status: engine.Stopped}
	}
	return engine.Outcome{Status: engine.Failed, Reason: err.Error()}
}

// serve is the run's loop.
func (c *Coordinator) serve(ctx context.Context, r engine.Run, run *remoteRun) engine.Outcome {
	var arrivals <-chan struct{}
	if a, ok := r.Host.(engine.Arrivals); ok {
		arrivals = a.Arrivals()
	}
	for {
		select {
		case <-ctx.Done():
			c.sendStop(run)
			return engine.Outcome{Status: engine.Stopped}
		case <-run.lostCh:
			return engine.Outcome{Status: engine.Stopped}
		case <-arrivals:
			c.publishWaiting(ctx, run)
		case <-r.Host.Interrupts():
			c.publishWaiting(ctx, run)
		case m := <-run.reqs:
			c.answer(ctx, run, m)
			if run.moved {
				if err := c.homecoming(ctx, r, run); err != nil {
					return engine.Outcome{Status: engine.Paused, Reason: err.Error()}
				}
				c.log.Info("the task's branch moved; its run goes on from there", "task_id", run.id)
				return engine.Outcome{Status: engine.Stopped}
			}
		case m := <-run.up:
			if out, done := c.upMsg(ctx, r, run, m); done {
				return out
			}
		}
	}
}

// sendStop asks the worker to stop the run (the executor stopped it: a
// cancel, a shutdown).
func (c *Coordinator) sendStop(run *remoteRun) {
	m := nats.NewMsg(injSubject(run.id))
	m.Header.Set(hdrKind, kindStop)
	m.Header.Set(hdrEpoch, epochString(run.epoch))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.js.PublishMsg(ctx, m, jetstream.WithMsgID(fmt.Sprintf("stop-%s-%d", run.id, run.epoch))); err != nil {
		c.log.Warn("telling a worker to stop a task", "task_id", run.id, "err", err)
	}
}

// publishWaiting puts every injection waiting for the task on its
// subject, each under its own message id (the wire's duplicates are
// dropped within the stream's window; the worker takes only what a
// boundary lists).
func (c *Coordinator) publishWaiting(ctx context.Context, run *remoteRun) []int64 {
	inbox, err := run.host.Inbox(ctx)
	if err != nil {
		c.log.Warn("reading a remote task's messages", "task_id", run.id, "err", err)
		return nil
	}
	ids := make([]int64, 0, len(inbox))
	for _, inj := range inbox {
		b, err := json.Marshal(inj)
		if err != nil {
			continue
		}
		m := nats.NewMsg(injSubject(run.id))
		m.Header.Set(hdrKind, kindInj)
		m.Data = b
		if _, err := c.js.PublishMsg(ctx, m, jetstream.WithMsgID("inj-"+strconv.FormatInt(inj.ID, 10))); err != nil {
			c.log.Warn("sending a message to a remote task", "task_id", run.id, "err", err)
			continue
		}
		ids = append(ids, inj.ID)
	}
	return ids
}

// onHost routes a worker's request to its run, or answers fenced.
func (c *Coordinator) onHost(m *nats.Msg) {
	id := task.ID(strings.TrimPrefix(m.Subject, "np.host."))
	var req hostReq
	if err := json.Unmarshal(m.Data, &req); err != nil {
		reply(m, hostReply{Error: "bad request: " + err.Error()})
		return
	}
	c.mu.Lock()
	run := c.runs[id]
	c.mu.Unlock()
	if run == nil || run.epoch != req.Epoch || run.worker != req.Worker || run.secret != req.Run {
		c.stale(id, req.Worker, req.Epoch, req.Op)
		reply(m, hostReply{Fenced: true})
		return
	}
	select {
	case run.reqs <- m:
	case <-run.ended:
		reply(m, hostReply{Fenced: true})
	}
}

// onUp routes a message of the NP_UP stream to its run; one of a fenced
// run is dropped (a checkpoint answered fenced) and acknowledged.
func (c *Coordinator) onUp(m jetstream.Msg) {
	id := task.ID(strings.TrimPrefix(m.Subject(), "np.up."))
	epoch := parseEpoch(m.Headers().Get(hdrEpoch))
	c.mu.Lock()
	run := c.runs[id]
	c.mu.Unlock()
	if run != nil && run.epoch == epoch && run.secret == m.Headers().Get(hdrRun) {
		select {
		case run.up <- m:
			return
		case <-run.ended:
		}
	}
	kind := m.Headers().Get(hdrKind)
	c.stale(id, "", epoch, kind)
	if kind == kindCkpt {
		var ws wireStep
		_ = json.Unmarshal(m.Data(), &ws)
		c.replyTo(m.Headers().Get(hdrReply), ckptReply{Seq: ws.Seq, Fenced: true})
	}
	_ = m.Ack()
}

// staleKept bounds the fenced runs remembered as reported.
const staleKept = 10000

// stale records, once per task and epoch, that a fenced run spoke.
func (c *Coordinator) stale(id task.ID, worker string, epoch uint64, what string) {
	c.mu.Lock()
	if c.staleSeen == nil || len(c.staleSeen) >= staleKept {
		c.staleSeen = map[string]bool{} // bounded: a long-fenced run may be reported again
	}
	key := string(id) + "/" + epochString(epoch)
	seen := c.staleSeen[key]
	c.staleSeen[key] = true
	c.mu.Unlock()
	if !seen {
		c.log.Info("dropped a fenced run's message", "task_id", id, "epoch", epoch, "what", what)
		c.record(context.Background(), id, event.ClusterStale{Worker: worker, Epoch: epoch, What: what})
	}
}

func reply(m *nats.Msg, r hostReply) {
	b, _ := json.Marshal(r)
	_ = m.Respond(b)
}

func (c *Coordinator) replyTo(subject string, v any) {
	if subject == "" {
		return
	}
	b, _ := json.Marshal(v)
	_ = c.o.Conn.Publish(subject, b)
}
