package supervisor

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// Options configure a Runtime.
type Options struct {
	// Name names the supervisor in the log ("the watcher").
	Name   string
	Logger *slog.Logger
	// Now is the clock of Stats.Started; nil means time.Now.
	Now func() time.Time
	// Backoff returns the pause before the loop starts again after a crash
	// or the end of its feed: n counts the loops in a row that ended
	// within the last pause of starting (from 1; a loop that ran longer
	// starts the count again). nil means one second every time.
	Backoff func(n int) time.Duration
	// Results is the capacity of the channel that hands jobs' results to
	// the loop; 0 means 64.
	Results int
}

// Stats are the runtime's counters.
type Stats struct {
	// Running is true while Run runs the loop (restarts included).
	Running bool
	Started time.Time
	// Restarts counts restarts of the loop after a panic; Panics counts
	// panics recovered in one handler (Safely) or one job (Go).
	Restarts uint64
	Panics   uint64
}

// Runtime runs one supervisor's loop. Its zero value is not usable; call
// New.
type Runtime struct {
	o       Options
	log     *slog.Logger
	results chan func(context.Context)
	jobs    sync.WaitGroup

	// last is the last event the loop handled (0: none); owned by the
	// loop goroutine. fromLog makes a last of 0 mean the log's beginning
	// (StartAfter), not live.
	last    int64
	fromLog bool

	mu sync.Mutex
	st Stats // guarded by mu
}

// New returns a Runtime.
func New(o Options) *Runtime {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Backoff == nil {
		o.Backoff = func(int) time.Duration { return time.Second }
	}
	if o.Name == "" {
		o.Name = "the supervisor"
	}
	if o.Results <= 0 {
		o.Results = 64
	}
	return &Runtime{o: o, log: o.Logger, results: make(chan func(context.Context), o.Results)}
}

// Run calls loop until ctx ends. loop returns when ctx ends or when it
// cannot go on (its feed ended); a panic in it is recovered, logged and
// counted in Restarts. Either way it is called again after a pause
// (Options.Backoff), not in a spin. Run returns nil when ctx ends, after
// the jobs started with Go have returned.
func (r *Runtime) Run(ctx context.Context, loop func(ctx context.Context)) error {
	defer r.jobs.Wait()
	r.mu.Lock()
	r.st.Running, r.st.Started = true, r.o.Now().UTC()
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.st.Running = false
		r.mu.Unlock()
	}()
	var (
		n     int           // loops in a row that ended soon after they started
		pause time.Duration // the last pause
	)
	for {
		began := time.Now()
		crashed := r.runLoop(ctx, loop)
		if ctx.Err() != nil {
			return nil
		}
		if crashed {
			r.mu.Lock()
			r.st.Restarts++
			r.mu.Unlock()
		}
		if n > 0 && time.Since(began) > pause {
			n = 0 // it ran a while: a fresh failure, not a series
		}
		n++
		pause = r.o.Backoff(n)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

func (r *Runtime) runLoop(ctx context.Context, loop func(context.Context)) (crashed bool) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error(r.o.Name+"'s loop panicked; restarting it", "panic", p, "stack", string(debug.Stack()))
			crashed = true
		}
	}()
	loop(ctx)
	return false
}

// Safely runs fn, recovering a panic: it is logged as msg (with args,
// key-value pairs) and counted in Panics, and returned (nil when fn
// returned normally).
func (r *Runtime) Safely(fn func(), msg string, args ...any) (recovered any) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error(msg, append(args, "panic", p, "stack", string(debug.Stack()))...)
			r.mu.Lock()
			r.st.Panics++
			r.mu.Unlock()
			recovered = p
		}
	}()
	fn()
	return nil
}

// Go runs fn in a goroutine the runtime owns: Run joins it before
// returning. What fn returns, when not nil, is handed back to the loop
// through Results (dropped when ctx ends first). A panic in fn is
// recovered and counted, and nothing is handed back.
func (r *Runtime) Go(ctx context.Context, fn func(ctx context.Context) func(context.Context)) {
	r.jobs.Add(1)
	go func() {
		defer r.jobs.Done()
		var back func(context.Context)
		if r.Safely(func() { back = fn(ctx) }, r.o.Name+"'s background job panicked") != nil || back == nil {
			return
		}
		select {
		case r.results <- back:
		case <-ctx.Done():
		}
	}()
}

// Results delivers the jobs' results; the loop selects on it and calls
// each (through Safely, or its own guard) on its goroutine.
func (r *Runtime) Results() <-chan func(context.Context) { return r.results }

// Stats returns the runtime's counters.
func (r *Runtime) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}
