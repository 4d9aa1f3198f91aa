package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// ErrFenced is returned to the engine when the coordinator gave the task
// to another run: this one must stop and send nothing.
var ErrFenced = errors.New("the coordinator moved this task to another run")

// requestTimeout bounds one request to the coordinator.
const requestTimeout = 30 * time.Second

// workerHost is engine.Host on a worker: each call goes to the
// coordinator's run of the task, which serves it with the executor's host.
type workerHost struct {
	w      *Worker
	a      Assignment
	id     task.ID
	dir    string
	cancel context.CancelFunc
	fenced atomic.Bool
	obs    atomic.Uint64

	interrupts chan struct{}
	arrived    chan struct{}

	mu      sync.Mutex
	seq     uint64
	pending map[int64]inject.Injection // arrived on the wire, not yet delivered
	msgs    map[int64]jetstream.Msg    // their messages, acknowledged once delivered
	applied map[int64]bool             // delivered by this run
	inbox   []inject.Injection
	// lastTree is the tree of the last snapshot, lastHead the work
	// tree's HEAD then; snapshot its commit.
	lastTree, lastHead, snapshot, snapshotRef string
}

func newWorkerHost(w *Worker, a Assignment, dir string) *workerHost {
	return &workerHost{w: w, a: a, id: a.Task.ID, dir: dir, cancel: func() {},
		interrupts: make(chan struct{}, 1), arrived: make(chan struct{}, 1),
		pending: map[int64]inject.Injection{}, msgs: map[int64]jetstream.Msg{}, applied: map[int64]bool{},
		snapshot: a.Snapshot, snapshotRef: a.SnapshotRef}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// fence stops the run for good.
func (h *workerHost) fence() {
	h.fenced.Store(true)
	h.cancel()
}

// request asks the coordinator's run; a fenced answer fences this run.
func (h *workerHost) request(ctx context.Context, op string, body any) (hostReply, error) {
	req := hostReq{Op: op, Epoch: h.a.Epoch, Worker: h.w.name, Run: h.a.Secret}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return hostReply{}, err
		}
		req.Body = b
	}
	data, _ := json.Marshal(req)
	var last error
	for attempt := range 3 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return hostReply{}, ctx.Err()
			case <-time.After(time.Duration(attempt) * h.w.o.Heartbeat):
			}
		}
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		m, err := h.w.nc.RequestWithContext(rctx, hostSubject(h.id), data)
		cancel()
		if err != nil {
			last = err
			if ctx.Err() != nil {
				return hostReply{}, ctx.Err()
			}
			continue
		}
		var r hostReply
		if err := json.Unmarshal(m.Data, &r); err != nil {
			return hostReply{}, err
		}
		if r.Fenced {
			h.fence()
			return r, ErrFenced
		}
		if r.Error != "" {
			return r, errors.New(r.Error)
		}
		return r, nil
	}
	return hostReply{}, fmt.Errorf("asking the coordinator (%s): %w", op, last)
}

// follow consumes the task's injection subject until the returned stop.
func (h *workerHost) follow(ctx context.Context) (func(), error) {
	// The run's own consumer of the task's subject, made by the
	// coordinator under a name only the assignment tells (the run's
	// secret): a worker cannot make or find another's.
	cons, err := h.w.js.Consumer(ctx, StreamInject, injConsumer(h.a.Secret))
	if err != nil {
		return nil, fmt.Errorf("following the task's messages: %w", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		switch m.Headers().Get(hdrKind) {
		case kindStop:
			if parseEpoch(m.Headers().Get(hdrEpoch)) == h.a.Epoch {
				h.cancel()
			}
			_ = m.Ack()
		case kindInj:
			var inj inject.Injection
			if json.Unmarshal(m.Data(), &inj) != nil {
				return
			}
			h.mu.Lock()
			applied := h.applied[inj.ID]
			if !applied {
				h.pending[inj.ID] = inj
				h.msgs[inj.ID] = m
			}
			h.mu.Unlock()
			if applied {
				_ = m.Ack()
			}
			if inj.Urgent {
				signal(h.interrupts)
			}
			signal(h.arrived)
		}
	})
	if err != nil {
		return nil, err
	}
	return cc.Stop, nil
}

// Emit implements engine.Host: observations go to the task's stream.
func (h *workerHost) Emit(ps ...event.Payload) {
	if len(ps) == 0 || h.fenced.Load() {
		return
	}
	now := time.Now()
	evs := make([]event.Event, len(ps))
	for i, p := range ps {
		evs[i] = event.New(now, h.id, p)
	}
	b, err := json.Marshal(evs)
	if err != nil {
		return
	}
	m := nats.NewMsg(upSubject(h.id))
	m.Header.Set(hdrKind, kindObs)
	m.Header.Set(hdrEpoch, epochString(h.a.Epoch))
	m.Header.Set(hdrRun, h.a.Secret)
	m.Data = b
	n := h.obs.Add(1)
	if _, err := h.w.js.PublishMsgAsync(m, jetstream.WithMsgID(fmt.Sprintf("%s.%d.o%d", h.id, h.a.Epoch, n))); err != nil {
		h.w.o.Logger.Debug("sending observations", "task_id", h.id, "err", err)
	}
}

// Conversation implements engine.Host.
func (h *workerHost) Conversation(ctx context.Context) ([]llm.Message, error) {
	r, err := h.request(ctx, opConversation, nil)
	return r.Conversation, err
}

// Commit implements engine.Host: the work tree's snapshot is pushed, then
// the step goes to the task's stream and the coordinator's answer is
// awaited (sent again, under a new message id, when it does not come).
func (h *workerHost) Commit(ctx context.Context, s engine.Step) (task.Task, error) {
	if h.fenced.Load() {
		return task.Task{}, ErrFenced
	}
	if err := h.takeSnapshot(ctx); err != nil {
		return task.Task{}, err
	}
	h.mu.Lock()
	h.seq++
	ws := wireStep{Seq: h.seq, Turn: s.Turn, Messages: s.Messages, Replace: s.Replace, Delivered: s.Delivered,
		Call: s.Call, Manifest: s.Manifest, Snapshot: h.snapshot, SnapshotRef: h.snapshotRef}
	h.mu.Unlock()
	now := time.Now()
	for _, p := range s.Events {
		ws.Events = append(ws.Events, event.New(now, h.id, p))
	}
	data, err := json.Marshal(ws)
	if err != nil {
		return task.Task{}, err
	}
	inbox := h.w.nc.NewInbox()
	sub, err := h.w.nc.SubscribeSync(inbox)
	if err != nil {
		return task.Task{}, err
	}
	defer sub.Unsubscribe()
	for attempt := range 3 {
		m := nats.NewMsg(upSubject(h.id))
		m.Header.Set(hdrKind, kindCkpt)
		m.Header.Set(hdrEpoch, epochString(h.a.Epoch))
		m.Header.Set(hdrRun, h.a.Secret)
		m.Header.Set(hdrReply, inbox)
		m.Data = data
		pctx, cancel := context.WithTimeout(ctx, requestTimeout)
		_, err := h.w.js.PublishMsg(pctx, m, jetstream.WithMsgID(fmt.Sprintf("%s.%d.%d.%d", h.id, h.a.Epoch, ws.Seq, attempt)))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return task.Task{}, ctx.Err()
			}
			continue
		}
		for {
			rctx, cancel := context.WithTimeout(ctx, requestTimeout)
			rm, err := sub.NextMsgWithContext(rctx)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return task.Task{}, ctx.Err()
				}
				break // send it again
			}
			var r ckptReply
			if json.Unmarshal(rm.Data, &r) != nil || r.Seq != ws.Seq {
				continue
			}
			switch {
			case r.Fenced:
				h.fence()
				return task.Task{}, ErrFenced
			case r.Error != "":
				return task.Task{}, errors.New(r.Error)
			}
			h.delivered(s.Delivered)
			return r.Task, nil
		}
	}
	return task.Task{}, errors.New("the coordinator did not answer the checkpoint")
}

// delivered marks injections as in the conversation and acknowledges
// their messages: the delivery receipt.
func (h *workerHost) delivered(injs []inject.Injection) {
	h.mu.Lock()
	var acks []jetstream.Msg
	for _, inj := range injs {
		h.applied[inj.ID] = true
		delete(h.pending, inj.ID)
		if m := h.msgs[inj.ID]; m != nil {
			acks = append(acks, m)
			delete(h.msgs, inj.ID)
		}
	}
	h.mu.Unlock()
	for _, m := range acks {
		_ = m.Ack()
	}
}

// takeSnapshot commits the work tree when it changed since the last
// snapshot and pushes it to the run's ref.
func (h *workerHost) takeSnapshot(ctx context.Context) error {
	tree, err := git.WorkTreeTree(ctx, h.dir)
	if err != nil {
		return fmt.Errorf("photographing the work tree: %w", err)
	}
	head, err := git.RevParse(ctx, h.dir, "HEAD")
	if err != nil {
		return fmt.Errorf("reading the work tree's HEAD: %w", err)
	}
	h.mu.Lock()
	same := tree == h.lastTree && head == h.lastHead
	h.mu.Unlock()
	if same {
		return nil
	}
	env := git.Identity(ctx, h.dir, h.w.o.AuthorName, h.w.o.AuthorEmail)
	// Each snapshot follows the last (the previous run's, at first): the
	// run's ref only moves forward. When the agent committed (HEAD is no
	// longer the base), HEAD is its second parent: the agent's commits
	// travel with it, and the coordinator puts them on the task's branch
	// (a merge of main it made on a send-back is kept as a merge).
	h.mu.Lock()
	parents := []string{cmp.Or(h.snapshot, h.a.Base)}
	h.mu.Unlock()
	if head != h.a.Base {
		parents = append(parents, head)
	}
	commit, err := git.CommitTree(ctx, h.dir, env, tree, parents,
		fmt.Sprintf("neuraphage: checkpoint of %s, epoch %d\n", h.id, h.a.Epoch))
	if err != nil {
		return err
	}
	// Pushed only while the run's epoch is current: a fenced run pushes
	// nothing (the git server fences its ref too).
	if _, err := h.request(ctx, opTake, nil); err != nil {
		return err
	}
	ref := fmt.Sprintf("neuraphage/%s/e%d", h.id, h.a.Epoch)
	if err := h.w.o.Code.Push(ctx, h.a, h.dir, commit, ref); err != nil {
		return err
	}
	h.mu.Lock()
	h.lastTree, h.lastHead, h.snapshot, h.snapshotRef = tree, head, commit, ref
	h.mu.Unlock()
	return nil
}

// Prepare implements engine.Host: the coordinator prepares the boundary
// and lists the injections it read; they are taken from what arrived on
// the task's subject (waiting for any still on the way).
func (h *workerHost) Prepare(ctx context.Context) (task.Task, error) {
	r, err := h.request(ctx, opPrepare, nil)
	if err != nil {
		return task.Task{}, err
	}
	deadline := time.NewTimer(requestTimeout)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		var inbox []inject.Injection
		missing := 0
		for _, id := range r.IDs {
			if h.applied[id] {
				continue
			}
			inj, ok := h.pending[id]
			if !ok {
				missing++
				continue
			}
			inbox = append(inbox, inj)
		}
		if missing == 0 {
			h.inbox = inbox
			h.mu.Unlock()
			return *r.Task, nil
		}
		h.mu.Unlock()
		select {
		case <-ctx.Done():
			return task.Task{}, ctx.Err()
		case <-deadline.C:
			return task.Task{}, fmt.Errorf("%d of the task's messages did not arrive", missing)
		case <-h.arrived:
		}
	}
}

// Inbox implements engine.Host: what the last Prepare listed, once.
func (h *workerHost) Inbox(ctx context.Context) ([]inject.Injection, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	inbox := h.inbox
	h.inbox = nil
	return slices.Clone(inbox), nil
}

// Interrupts implements engine.Host.
func (h *workerHost) Interrupts() <-chan struct{} { return h.interrupts }

// UrgentWaiting implements engine.Host.
func (h *workerHost) UrgentWaiting(ctx context.Context) bool {
	r, err := h.request(ctx, opUrgent, nil)
	return err == nil && r.Urgent
}

// Allow implements engine.Host.
func (h *workerHost) Allow(ctx context.Context) *engine.Stop {
	r, err := h.request(ctx, opAllow, nil)
	if err != nil {
		return &engine.Stop{Status: engine.Stopped, Reason: err.Error()}
	}
	return r.Stop
}

// RecordLearning implements engine.Host.
func (h *workerHost) RecordLearning(ctx context.Context, l engine.Learning) error {
	_, err := h.request(ctx, opLearning, l)
	return err
}

// Now implements engine.Host.
func (h *workerHost) Now() time.Time { return time.Now() }

// done sends the run's outcome with the last snapshot, unless the run
// was fenced.
func (h *workerHost) done(ctx context.Context, out engine.Outcome) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
	defer cancel()
	if h.fenced.Load() {
		return
	}
	if err := h.takeSnapshot(ctx); err != nil {
		h.w.o.Logger.Warn("the last snapshot", "task_id", h.id, "err", err)
	}
	h.mu.Lock()
	d := doneMsg{Outcome: out, Snapshot: h.snapshot, SnapshotRef: h.snapshotRef}
	h.mu.Unlock()
	b, _ := json.Marshal(d)
	m := nats.NewMsg(upSubject(h.id))
	m.Header.Set(hdrKind, kindDone)
	m.Header.Set(hdrEpoch, epochString(h.a.Epoch))
	m.Header.Set(hdrRun, h.a.Secret)
	m.Data = b
	if _, err := h.w.js.PublishMsg(ctx, m, jetstream.WithMsgID(fmt.Sprintf("%s.%d.done", h.id, h.a.Epoch))); err != nil {
		h.w.o.Logger.Warn("reporting the outcome", "task_id", h.id, "err", err)
	}
}
