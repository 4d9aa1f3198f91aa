package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// Progress is a run's progress state (seed 003's ProgressState), derived
// from the observations its engine emits: the same for every engine. Its
// methods are safe for concurrent use.
type Progress struct {
	mu      sync.Mutex
	started time.Time
	last    time.Time
	turn    int
	read    map[string]bool
	written map[string]bool
	commits int
	lines   int
	errors  []string
	denials []event.PermissionDenied
	// commitCalls are the shell calls running git commit, by call id,
	// until their result says whether a commit was made.
	commitCalls map[string]bool
	// inFlight are the tool calls without a result yet.
	inFlight map[string]bool
}

// NewProgress starts tracking a run that began at start.
func NewProgress(start time.Time) *Progress {
	return &Progress{started: start, last: start, read: map[string]bool{}, written: map[string]bool{}, commitCalls: map[string]bool{}, inFlight: map[string]bool{}}
}

// maxErrors bounds the errors kept (the latest ones).
const maxErrors = 32

// Observe takes one observation made at now.
func (p *Progress) Observe(pl event.Payload, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.After(p.last) {
		p.last = now
	}
	switch o := pl.(type) {
	case event.TurnStarted:
		p.turn = max(p.turn, o.Turn)
		clear(p.inFlight)
	case event.TurnEnded, event.Interrupted:
		clear(p.inFlight) // calls cut short leave no result
	case event.Text:
		p.lines += strings.Count(strings.TrimRight(o.Text, "\n"), "\n") + 1
	case event.ToolCall:
		p.inFlight[o.CallID] = true
		args := toolArgs(o.Args)
		if isRead(o.Name) && args.path() != "" {
			p.read[args.path()] = true
		}
		if isShell(o.Name) && strings.Contains(args.Command, "git commit") {
			p.commitCalls[o.CallID] = true
		}
	case event.ToolResult:
		delete(p.inFlight, o.CallID)
		p.lines++
		if o.Error {
			p.addError(fmt.Sprintf("%s failed", o.Name))
		} else if p.commitCalls[o.CallID] {
			p.commits++
		}
		delete(p.commitCalls, o.CallID)
	case event.FileChanged:
		p.written[o.Path] = true
	case event.CommitMade:
		p.commits++
	case event.ModelError:
		p.addError("model error: " + o.Message)
	case event.Failed:
		p.addError(o.Reason)
	case event.PermissionDenied:
		p.denials = append(p.denials, o)
		p.addError("permission denied: " + denied(o))
	}
}

func (p *Progress) addError(s string) {
	p.errors = append(p.errors, s)
	if len(p.errors) > maxErrors {
		p.errors = slices.Delete(p.errors, 0, len(p.errors)-maxErrors)
	}
}

// ToolRunning reports whether a tool call is in flight: called, with no
// result yet.
func (p *Progress) ToolRunning() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.inFlight) > 0
}

// LastActivity is when the run last reported anything.
func (p *Progress) LastActivity() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// State is a copy of a Progress.
type State struct {
	Started, LastActivity   time.Time
	Turn                    int
	FilesRead, FilesWritten []string
	Commits, OutputLines    int
	Errors                  []string
	PermissionErrors        []event.PermissionDenied
}

// State returns the progress so far.
func (p *Progress) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return State{Started: p.started, LastActivity: p.last, Turn: p.turn,
		FilesRead: sortedKeys(p.read), FilesWritten: sortedKeys(p.written),
		Commits: p.commits, OutputLines: p.lines,
		Errors: slices.Clone(p.errors), PermissionErrors: slices.Clone(p.denials)}
}

// Snapshot is the progress as an event at now.
func (p *Progress) Snapshot(now time.Time) event.Progress {
	s := p.State()
	return event.Progress{Turn: s.Turn, FilesRead: len(s.FilesRead), FilesWritten: len(s.FilesWritten),
		Commits: s.Commits, OutputLines: s.OutputLines, Errors: len(s.Errors), Denials: len(s.PermissionErrors),
		ElapsedMs: now.Sub(s.Started).Milliseconds(), IdleMs: now.Sub(s.LastActivity).Milliseconds()}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// args are the fields of a tool call's input that progress reads, in the
// spellings of the engines (the native tools, Claude Code, Codex, Gemini).
type args struct {
	Path     string `json:"path"`
	FilePath string `json:"file_path"`
	Absolute string `json:"absolute_path"`
	Command  string `json:"command"`
}

func (a args) path() string {
	switch {
	case a.Path != "":
		return a.Path
	case a.FilePath != "":
		return a.FilePath
	}
	return a.Absolute
}

func toolArgs(raw json.RawMessage) args {
	var a args
	_ = json.Unmarshal(raw, &a) // other shapes read as nothing
	return a
}

func isRead(name string) bool {
	switch strings.ToLower(name) {
	case "read_file", "read", "view", "read_many_files", "notebookread":
		return true
	}
	return false
}

func isShell(name string) bool {
	switch strings.ToLower(name) {
	case "bash", "shell", "run_shell_command", "exec_command", "local_shell":
		return true
	}
	return false
}

// TimeoutError is why a Watchdog stopped a run: Which timeout ("idle" or
// "total") passed its Limit. It is the run's cancellation cause.
type TimeoutError struct {
	Which string
	Limit time.Duration
	// Idle is how long the run had been silent.
	Idle time.Duration
}

func (e *TimeoutError) Error() string {
	if e.Which == "idle" {
		return fmt.Sprintf("stopped by the idle timeout: nothing reported for %s (sandbox.idle_timeout_secs, scaled by complexity)", e.Limit)
	}
	return fmt.Sprintf("stopped by the total timeout: the run lasted %s (sandbox.total_timeout_secs, scaled by complexity)", e.Limit)
}

// Event is the timeout as an event.
func (e *TimeoutError) Event() event.Timeout {
	return event.Timeout{Which: e.Which, LimitSecs: int(e.Limit / time.Second), IdleMs: e.Idle.Milliseconds()}
}

// Watchdog holds a run to its idle and total timeouts with timers of its
// own: a run that reports nothing is stopped when the idle timer fires,
// whether or not output ever arrives (the earlier implementation checked
// only when output arrived, so a silent hung agent was never stopped).
// Touch records activity; Busy says a tool call is in flight, during which
// the idle limit is the longer of idle and busyIdle (a tool may run that
// long by its own timeout: a build that prints nothing is not a hang);
// Run waits for a timer or the end.
type Watchdog struct {
	idle, busyIdle, total time.Duration
	touch                 chan struct{}
	now                   func() time.Time

	mu   sync.Mutex
	last time.Time // guarded by mu
	busy bool      // guarded by mu
}

// NewWatchdog returns a watchdog for the limits (zero: none of that kind).
func NewWatchdog(idle, busyIdle, total time.Duration) *Watchdog {
	return &Watchdog{idle: idle, busyIdle: max(idle, busyIdle), total: total, touch: make(chan struct{}, 1), now: time.Now, last: time.Now()}
}

// Touch records activity now. It never blocks.
func (w *Watchdog) Touch() { w.set(nil) }

// Busy records activity now and whether a tool call is in flight.
func (w *Watchdog) Busy(busy bool) { w.set(&busy) }

func (w *Watchdog) set(busy *bool) {
	w.mu.Lock()
	w.last = w.now()
	if busy != nil {
		w.busy = *busy
	}
	w.mu.Unlock()
	select {
	case w.touch <- struct{}{}:
	default:
	}
}

// limit is the idle limit now.
func (w *Watchdog) limit() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy {
		return w.busyIdle
	}
	return w.idle
}

// Run waits until ctx ends (nil) or a timeout passes (its *TimeoutError).
// The idle timer restarts at every Touch or Busy.
func (w *Watchdog) Run(ctx context.Context) *TimeoutError {
	var idleC, totalC <-chan time.Time
	var idleT *time.Timer
	if w.idle > 0 {
		idleT = time.NewTimer(w.idle)
		defer idleT.Stop()
		idleC = idleT.C
	}
	if w.total > 0 {
		t := time.NewTimer(w.total)
		defer t.Stop()
		totalC = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.touch:
			if idleT != nil {
				idleT.Reset(w.limit())
			}
		case <-idleC:
			return &TimeoutError{Which: "idle", Limit: w.limit(), Idle: w.silent()}
		case <-totalC:
			return &TimeoutError{Which: "total", Limit: w.total, Idle: w.silent()}
		}
	}
}

func (w *Watchdog) silent() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now().Sub(w.last)
}
