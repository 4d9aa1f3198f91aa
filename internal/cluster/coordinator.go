package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/gitserve"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Options configures the coordinator.
type Options struct {
	// Conn is the coordinator's connection (its internal token).
	Conn *nats.Conn
	// Tokens are the workers' tokens: a token's labels replace those its
	// worker declares.
	Tokens *Tokens
	// Git serves the tasks' code to workers at GitURL (each worker its own
	// token, each task at its epoch's URL); nil: workers use the task's
	// repository path.
	Git    *gitserve.Server
	GitURL string
	// Models and Keys are sent with every assignment.
	Models llm.Config
	Keys   map[string]string
	// Heartbeat is the workers' interval; a worker silent for Misses
	// intervals is lost.
	Heartbeat time.Duration
	Misses    int
	// Record logs the cluster's events (store.EmitEvents).
	Record func(ctx context.Context, evs ...event.Event) error
	// Kick tells the executor to look for work (a worker joined or has
	// room again).
	Kick   func()
	Logger *slog.Logger
}

// Coordinator is the coordinator's side of the cluster; its Engine runs
// tasks on workers.
type Coordinator struct {
	o      Options
	js     jetstream.JetStream
	kvW    jetstream.KeyValue
	kvA    jetstream.KeyValue
	up     jetstream.Consumer
	log    *slog.Logger
	author [2]string

	mu      sync.Mutex
	workers map[string]*workerState
	runs    map[task.ID]*remoteRun
	changed chan struct{} // closed and replaced when placement may succeed
	// staleSeen: the fenced runs (task/epoch) already reported.
	staleSeen map[string]bool
}

type workerState struct {
	hb       Heartbeat
	labels   map[string]string
	seen     time.Time
	alive    bool
	assigned map[task.ID]bool
	gitToken string // its token for the git server
}

// NewCoordinator creates the streams, buckets and consumer the cluster
// uses (idempotent) and returns the coordinator; Serve serves it.
func NewCoordinator(ctx context.Context, o Options) (*Coordinator, error) {
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	if o.Misses <= 0 {
		o.Misses = 5
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Kick == nil {
		o.Kick = func() {}
	}
	js, err := jetstream.New(o.Conn)
	if err != nil {
		return nil, err
	}
	c := &Coordinator{o: o, js: js, log: o.Logger, workers: map[string]*workerState{},
		runs: map[task.ID]*remoteRun{}, changed: make(chan struct{})}
	streams := []jetstream.StreamConfig{
		{Name: StreamWork, Subjects: []string{"np.work.*"}, Retention: jetstream.WorkQueuePolicy},
		{Name: StreamUp, Subjects: []string{"np.up.*"}, Retention: jetstream.WorkQueuePolicy, Duplicates: 2 * time.Minute},
		{Name: StreamInject, Subjects: []string{"np.inj.*"}, MaxAge: 7 * 24 * time.Hour, Duplicates: 10 * time.Minute},
	}
	for _, s := range streams {
		if _, err := js.CreateOrUpdateStream(ctx, s); err != nil {
			return nil, fmt.Errorf("stream %s: %w", s.Name, err)
		}
	}
	if c.kvW, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: BucketWorkers, History: 1}); err != nil {
		return nil, fmt.Errorf("bucket %s: %w", BucketWorkers, err)
	}
	if c.kvA, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: BucketAssign, History: 1}); err != nil {
		return nil, fmt.Errorf("bucket %s: %w", BucketAssign, err)
	}
	if c.up, err = js.CreateOrUpdateConsumer(ctx, StreamUp, jetstream.ConsumerConfig{
		Durable: upConsumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute, MaxAckPending: 20000,
	}); err != nil {
		return nil, fmt.Errorf("consumer %s: %w", upConsumer, err)
	}
	return c, nil
}

// Serve serves the cluster until ctx ends: workers' heartbeats, the
// monitor that finds lost workers, the workers' requests and the stream
// of their observations and checkpoints.
func (c *Coordinator) Serve(ctx context.Context) error {
	watch, err := c.kvW.WatchAll(ctx)
	if err != nil {
		return err
	}
	defer watch.Stop()
	hostSub, err := c.o.Conn.Subscribe("np.host.*", c.onHost)
	if err != nil {
		return err
	}
	defer hostSub.Unsubscribe()
	cc, err := c.up.Consume(c.onUp)
	if err != nil {
		return err
	}
	defer cc.Stop()
	tick := time.NewTicker(c.o.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-watch.Updates():
			if !ok {
				return errors.New("the workers' heartbeat watch ended")
			}
			if e != nil {
				c.heartbeat(ctx, e)
			}
		case <-tick.C:
			c.monitor(ctx, time.Now())
		}
	}
}

// heartbeat records a worker's entry.
func (c *Coordinator) heartbeat(ctx context.Context, e jetstream.KeyValueEntry) {
	var hb Heartbeat
	if e.Operation() != jetstream.KeyValuePut || json.Unmarshal(e.Value(), &hb) != nil || hb.Worker != e.Key() {
		return
	}
	c.mu.Lock()
	w, known := c.workers[hb.Worker]
	if !known {
		w = &workerState{assigned: map[task.ID]bool{}}
		c.workers[hb.Worker] = w
	}
	wasAlive := w.alive
	w.hb, w.seen, w.alive = hb, time.Now(), !hb.Stopped
	w.labels = hb.Labels
	if c.o.Tokens != nil {
		if _, tl, ok := c.o.Tokens.lookup(hb.Worker); ok && len(tl) > 0 {
			w.labels = tl
		}
	}
	var lost []*remoteRun
	if hb.Stopped {
		// It left (stopped or drained): what it still held goes elsewhere now.
		for _, r := range c.runs {
			if r.worker == hb.Worker {
				lost = append(lost, r)
			}
		}
	}
	c.signalLocked()
	c.mu.Unlock()
	for _, r := range lost {
		r.lose()
		c.record(ctx, r.id, event.ClusterLost{Worker: r.worker, Epoch: r.epoch})
	}
	if !wasAlive && w.alive && c.o.Git != nil && w.gitToken == "" {
		tok, err := randomToken()
		if err == nil {
			err = c.o.Git.Grant(hb.Worker, tok)
		}
		if err != nil {
			c.log.Warn("granting a worker the git server", "worker", hb.Worker, "err", err)
		} else {
			c.mu.Lock()
			w.gitToken = tok
			c.mu.Unlock()
		}
	}
	if !wasAlive && w.alive {
		if _, err := c.js.CreateOrUpdateConsumer(ctx, StreamWork, jetstream.ConsumerConfig{
			Durable: workConsumer(hb.Worker), FilterSubject: workSubject(hb.Worker),
			AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
		}); err != nil {
			c.log.Warn("creating a worker's consumer", "worker", hb.Worker, "err", err)
		}
		c.log.Info("worker joined", "worker", hb.Worker, "capacity", hb.Capacity, "labels", hb.Labels)
	}
	c.o.Kick()
}

// monitor finds the workers silent for too long: their runs end, and
// their tasks are placed again with a new epoch.
func (c *Coordinator) monitor(ctx context.Context, now time.Time) {
	limit := time.Duration(c.o.Misses) * c.o.Heartbeat
	c.mu.Lock()
	var lost []*remoteRun
	for name, w := range c.workers {
		if !w.alive || now.Sub(w.seen) <= limit {
			continue
		}
		w.alive = false
		c.log.Warn("worker lost", "worker", name, "silent", now.Sub(w.seen))
		for _, r := range c.runs {
			if r.worker == name {
				lost = append(lost, r)
			}
		}
	}
	c.mu.Unlock()
	for _, r := range lost {
		r.lose()
		c.record(ctx, r.id, event.ClusterLost{Worker: r.worker, Epoch: r.epoch})
	}
}

// signalLocked wakes the runs waiting for a worker.
func (c *Coordinator) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Ready implements engine.Engine: a live worker has room.
func (c *Coordinator) Ready() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.workers {
		if w.room() > 0 {
			return nil
		}
	}
	return errors.New("no cluster worker has room; join one with `neuraphage cluster join-info`")
}

func (w *workerState) room() int {
	if !w.alive || w.hb.Draining {
		return 0
	}
	return w.hb.Capacity - len(w.assigned)
}

// Required returns the labels a task needs: its tags label:k=v.
func Required(t task.Task) map[string]string {
	out := map[string]string{}
	for _, tag := range t.Tags {
		if kv, ok := strings.CutPrefix(tag, "label:"); ok {
			k, v, _ := strings.Cut(kv, "=")
			out[k] = v
		}
	}
	return out
}

// place waits for a worker that may run t and has room, and reserves a
// slot there: the one with the most room (then the fewest running, then
// the name).
func (c *Coordinator) place(ctx context.Context, t task.Task) (string, error) {
	need := Required(t)
	for {
		c.mu.Lock()
		best := ""
		var bw *workerState
		for _, name := range slices.Sorted(maps.Keys(c.workers)) {
			w := c.workers[name]
			if w.room() <= 0 || !fits(need, w.labels) {
				continue
			}
			if bw == nil || w.room() > bw.room() || w.room() == bw.room() && len(w.assigned) < len(bw.assigned) {
				best, bw = name, w
			}
		}
		if bw != nil {
			bw.assigned[t.ID] = true
			c.mu.Unlock()
			return best, nil
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-ch:
		}
	}
}

func fits(need, have map[string]string) bool {
	for k, v := range need {
		if hv, ok := have[k]; !ok || v != "" && hv != v {
			return false
		}
	}
	return true
}

// release frees the slot a run held.
func (c *Coordinator) release(worker string, id task.ID) {
	c.mu.Lock()
	if w := c.workers[worker]; w != nil {
		delete(w.assigned, id)
	}
	c.signalLocked()
	c.mu.Unlock()
	c.o.Kick()
}

func (c *Coordinator) record(ctx context.Context, id task.ID, p event.Payload) {
	if c.o.Record == nil {
		return
	}
	if err := c.o.Record(context.WithoutCancel(ctx), event.New(time.Now(), id, p)); err != nil {
		c.log.Warn("recording a cluster event", "task_id", id, "err", err)
	}
}

// WorkerStatus is one worker as the coordinator sees it.
type WorkerStatus struct {
	Name     string
	Labels   map[string]string
	Capacity int
	Running  []task.ID
	// Reported is what the worker's last heartbeat says it runs.
	Reported []task.ID
	Draining bool
	Alive    bool
	LastSeen time.Time
}

// Status is the cluster as the coordinator sees it.
type Status struct {
	Workers []WorkerStatus
	// Lag is how many messages from workers wait for the coordinator
	// (pending plus unacknowledged).
	Lag uint64
}

// Status reports the workers and the coordinator's lag.
func (c *Coordinator) Status(ctx context.Context) Status {
	var s Status
	c.mu.Lock()
	for _, name := range slices.Sorted(maps.Keys(c.workers)) {
		w := c.workers[name]
		running := slices.Sorted(maps.Keys(w.assigned))
		s.Workers = append(s.Workers, WorkerStatus{Name: name, Labels: w.labels, Capacity: w.hb.Capacity,
			Running: running, Reported: w.hb.Running, Draining: w.hb.Draining, Alive: w.alive, LastSeen: w.seen})
	}
	c.mu.Unlock()
	if info, err := c.up.Info(ctx); err == nil {
		s.Lag = info.NumPending + uint64(info.NumAckPending)
	}
	return s
}

func randomToken() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// gitToken returns a worker's git server token.
func (c *Coordinator) gitToken(worker string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.workers[worker]; w != nil {
		return w.gitToken
	}
	return ""
}
