package cluster

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// WorkerOptions configures a worker.
type WorkerOptions struct {
	// URL and Token join the coordinator's NATS server.
	URL, Token string
	// NATSToken, when set, is what the connection presents instead of
	// Token: the token of a NATS server that is not the coordinator's
	// embedded one (cluster.nats_url). Token still names the worker.
	NATSToken string
	// CAFile, when set, is the PEM file of the CA that signed the
	// coordinator's certificate (cluster.tls_cert), for its NATS server
	// and its git server.
	CAFile string
	// Labels and Capacity are what the worker declares.
	Labels   map[string]string
	Capacity int
	// Dir is where the tasks' work trees go (one per task and epoch).
	Dir string
	// Engine builds the engine that runs an assignment (with its model
	// settings).
	Engine func(a Assignment) (engine.Engine, error)
	// Code fetches and pushes the tasks' code; nil means ServedCode{}.
	Code Code
	// Heartbeat is how often the worker beats; zero means a second.
	Heartbeat time.Duration
	// Author signs the snapshots' commits.
	AuthorName, AuthorEmail string
	// NATS are extra connection options (tests dial through a proxy).
	NATS   []nats.Option
	Logger *slog.Logger
}

// Worker runs the tasks the coordinator sends it.
type Worker struct {
	o    WorkerOptions
	name string
	nc   *nats.Conn
	js   jetstream.JetStream

	mu       sync.Mutex
	running  map[task.ID]*slot
	draining bool
	room     chan struct{} // signalled when a run ends or the worker drains
}

// slot is one running task.
type slot struct{ cancel context.CancelFunc }

// NewWorker checks the options; Run joins.
func NewWorker(o WorkerOptions) (*Worker, error) {
	name, _, err := SplitToken(o.Token)
	if err != nil {
		return nil, err
	}
	if o.Capacity <= 0 {
		o.Capacity = 1
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	if o.Code == nil {
		o.Code = ServedCode{CAFile: o.CAFile}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Engine == nil {
		return nil, errors.New("a worker needs an engine")
	}
	return &Worker{o: o, name: name, running: map[task.ID]*slot{}, room: make(chan struct{}, 1)}, nil
}

// SetHeartbeat sets the heartbeat's interval (before Run).
func (w *Worker) SetHeartbeat(d time.Duration) { w.o.Heartbeat = d }

// Kill cuts the worker off at once, as a crash would: its connection
// closes and nothing more is sent; Run returns once its runs noticed.
func (w *Worker) Kill() {
	w.mu.Lock()
	nc := w.nc
	w.mu.Unlock()
	if nc != nil {
		nc.Close()
	}
}

// Name is the worker's name (from its token).
func (w *Worker) Name() string { return w.name }

// Drain makes the worker finish its running tasks, take no more, and
// then return from Run.
func (w *Worker) Drain() {
	w.mu.Lock()
	w.draining = true
	w.mu.Unlock()
	w.signal()
}

func (w *Worker) signal() {
	select {
	case w.room <- struct{}{}:
	default:
	}
}

// Run joins the coordinator and runs tasks until ctx ends (the running
// tasks stop; their runs are handed back) or the worker has drained.
func (w *Worker) Run(ctx context.Context) error {
	opts := []nats.Option{nats.Token(cmp.Or(w.o.NATSToken, w.o.Token)), nats.Name("neuraphage-worker-" + w.name),
		nats.CustomInboxPrefix(InboxPrefix(w.name)),
		nats.MaxReconnects(-1), nats.ReconnectWait(w.o.Heartbeat)}
	if w.o.CAFile != "" {
		opts = append(opts, nats.RootCAs(w.o.CAFile))
	}
	nc, err := nats.Connect(w.o.URL, append(opts, w.o.NATS...)...)
	if err != nil {
		if errors.As(err, new(*tls.CertificateVerificationError)) {
			return fmt.Errorf("joining %s: the coordinator's certificate is not trusted (give its CA with --ca FILE): %w", w.o.URL, err)
		}
		return fmt.Errorf("joining %s: %w", w.o.URL, err)
	}
	defer nc.Close()
	w.mu.Lock()
	w.nc = nc
	w.mu.Unlock()
	if w.js, err = jetstream.New(nc); err != nil {
		return err
	}
	kv, err := w.js.KeyValue(ctx, BucketWorkers)
	if err != nil {
		return fmt.Errorf("joining %s: the coordinator's cluster is not there: %w", w.o.URL, err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	hbCtx, stopHB := context.WithCancel(context.WithoutCancel(ctx))
	wg.Add(1)
	go func() { defer wg.Done(); w.beat(hbCtx, kv) }()
	defer stopHB()
	w.put(ctx, kv, false)
	cons, err := w.consumer(ctx)
	if err != nil {
		return err
	}
	var runs sync.WaitGroup
	defer runs.Wait()
	for {
		w.mu.Lock()
		free := w.o.Capacity - len(w.running)
		draining := w.draining
		idle := len(w.running) == 0
		w.mu.Unlock()
		if draining && idle || ctx.Err() != nil {
			return nil
		}
		if draining || free <= 0 {
			select {
			case <-ctx.Done():
			case <-w.room:
			}
			continue
		}
		msg, err := cons.Next(jetstream.FetchMaxWait(w.o.Heartbeat))
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
				w.o.Logger.Debug("waiting for work", "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(w.o.Heartbeat):
				}
			}
			continue
		}
		var a Assignment
		if err := json.Unmarshal(msg.Data(), &a); err != nil || a.Worker != w.name {
			_ = msg.Term()
			continue
		}
		runCtx, cancel := context.WithCancel(ctx)
		sl := &slot{cancel: cancel}
		w.mu.Lock()
		if old := w.running[a.Task.ID]; old != nil {
			old.cancel() // an older epoch of the same task: the coordinator moved on
		}
		w.running[a.Task.ID] = sl
		w.mu.Unlock()
		runs.Add(1)
		go func() {
			defer runs.Done()
			defer cancel()
			w.runTask(runCtx, msg, a)
			w.mu.Lock()
			if w.running[a.Task.ID] == sl {
				delete(w.running, a.Task.ID)
			}
			w.mu.Unlock()
			w.signal()
			w.put(context.WithoutCancel(ctx), kv, false)
		}()
	}
}

// consumer binds the worker's work queue consumer, which the coordinator
// makes when it first sees the worker's heartbeat.
func (w *Worker) consumer(ctx context.Context) (jetstream.Consumer, error) {
	for {
		c, err := w.js.Consumer(ctx, StreamWork, workConsumer(w.name))
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(w.o.Heartbeat / 4):
		}
	}
}

// beat puts the heartbeat every interval; at the end it says it left.
func (w *Worker) beat(ctx context.Context, kv jetstream.KeyValue) {
	t := time.NewTicker(w.o.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			w.put(stop, kv, true)
			cancel()
			return
		case <-t.C:
			w.put(ctx, kv, false)
		}
	}
}

func (w *Worker) put(ctx context.Context, kv jetstream.KeyValue, stopped bool) {
	w.mu.Lock()
	hb := Heartbeat{Worker: w.name, Labels: w.o.Labels, Capacity: w.o.Capacity,
		Running: slices.Sorted(maps.Keys(w.running)), Draining: w.draining, Stopped: stopped}
	w.mu.Unlock()
	b, _ := json.Marshal(hb)
	if _, err := kv.Put(ctx, w.name, b); err != nil && ctx.Err() == nil {
		w.o.Logger.Debug("heartbeat", "err", err)
	}
}

// runTask takes one assignment: the coordinator confirms the epoch, the
// code comes, the work message is acknowledged, the engine runs, and the
// outcome goes back with the last snapshot. A fenced run sends nothing.
func (w *Worker) runTask(ctx context.Context, msg jetstream.Msg, a Assignment) {
	log := w.o.Logger.With("task_id", a.Task.ID, "epoch", a.Epoch)
	h := newWorkerHost(w, a, filepath.Join(w.o.Dir, fmt.Sprintf("%s-e%d", a.Task.ID, a.Epoch)))
	if _, err := h.request(ctx, opTake, nil); err != nil {
		log.Info("assignment refused", "err", err)
		_ = msg.Term()
		return
	}
	defer os.RemoveAll(h.dir)
	if err := w.o.Code.Checkout(ctx, a, h.dir); err != nil {
		_ = msg.Ack()
		h.done(ctx, engine.Outcome{Status: engine.Failed, Reason: err.Error()})
		return
	}
	if err := msg.DoubleAck(ctx); err != nil {
		log.Info("acknowledging the assignment", "err", err)
		return
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	h.cancel = cancel
	stopInj, err := h.follow(runCtx)
	if err != nil {
		h.done(ctx, engine.Outcome{Status: engine.Stopped, Reason: err.Error()})
		return
	}
	defer stopInj()
	en, err := w.o.Engine(a)
	if err != nil {
		h.done(ctx, engine.Outcome{Status: engine.Paused, Reason: err.Error()})
		return
	}
	log.Info("task started")
	// On this machine the task's repository is the worker's own clone: the
	// coordinator's path names nothing here (or, on the coordinator's
	// machine, a repository whose object store the sandbox keeps closed).
	t := a.Task
	t.Repo = h.dir
	out := en.Run(runCtx, engine.Run{Task: t, Dir: h.dir, Branch: a.Branch, Env: a.Env, Host: h})
	log.Info("task run ended", "outcome", out.Status, "reason", out.Reason)
	if h.fenced.Load() {
		log.Info("the run was fenced: nothing pushed or reported")
		return
	}
	h.done(ctx, out)
}
