package supervise

import (
	"fmt"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Health is the Watcher's view of one task.
type Health struct {
	TaskID task.ID
	// State is the task's status as the Watcher last saw it (running,
	// paused, waiting, queued).
	State string
	// Status is healthy, struggling, stuck or runaway for a running task;
	// for a task not running, its state (paused, waiting, queued): there
	// is nothing to judge. Unknown for a task the Watcher has not seen;
	// unsupervised for a task created with --no-supervision.
	Status string
	// Activity says in words what a running task waits on, or what a task
	// not running waits for: "waiting on model 95 s, attempt 2 of 5",
	// "paused", "waiting for input", "queued"; empty otherwise.
	Activity string
	// Model is the model call in progress, nil when none.
	Model      *ModelCall
	Confidence float64
	Diagnosis  string
	Check      string
	Tier       int
	// Ladder is the intervention step reached: none, hint, warning,
	// critical, escalated, paused or aborted.
	Ladder string
	// Unheeded counts nudges that no progress followed.
	Unheeded  int
	LastCheck time.Time
	// The window's counters: the window spans the task's pauses, answers
	// and restarts.
	Steps               int
	StepsSinceProgress  int
	TokensSinceProgress int64
	USDSinceProgress    float64
	LastProgress        time.Time
	Evidence            []event.Evidence
}

// Stats are the Watcher's counters since it was built.
type Stats struct {
	Enabled bool
	// Running is false when the Watcher's loop is not running (disabled,
	// or ended).
	Running      bool
	Started      time.Time
	LastCycle    time.Time
	Cycles       uint64
	Observations uint64
	Watched      int // tasks with a window now
	// Tier1 counts findings by check; Tier2Calls the persona's judgements,
	// Tier2Failures the calls that failed or replied unusably (each one
	// puts the Watcher in degraded mode, tier 1 alone, until a call works).
	Tier1         map[string]uint64
	Tier2Calls    uint64
	Tier2Failures uint64
	// Tier2Tokens and Tier2USD are what the judgements cost (on the
	// watcher persona's tier); they are not charged to the tasks judged.
	Tier2Tokens    int64
	Tier2USD       float64
	Degraded       bool
	DegradedReason string
	DegradedSecs   float64
	Nudges         uint64
	Escalations    uint64
	Pauses         uint64
	Aborts         uint64
	HookBlocks     uint64
	// Panics counts evaluations of one task that panicked (recovered; the
	// others went on); Restarts counts restarts of the loop itself.
	Panics   uint64
	Restarts uint64
}

// ModelCall is a model call in progress: waiting for its reply, or being
// retried after failed attempts.
type ModelCall struct {
	Turn int
	// Since is when the call (its first attempt) started; WaitingSecs how
	// long ago that was.
	Since       time.Time
	WaitingSecs float64
	// Attempt is the attempt in progress (1 until a retry); MaxAttempts is
	// known once the call has been retried (0 before).
	Attempt     int
	MaxAttempts int
	// LastError is why the last attempt failed: its class and message.
	LastError string
}

// activity says what a task waits on, in words.
func activity(h Health) string {
	switch h.State {
	case "paused":
		return "paused"
	case "waiting":
		return "waiting for input"
	case "queued":
		return "queued"
	}
	m := h.Model
	if m == nil {
		return ""
	}
	s := fmt.Sprintf("waiting on model %s", secs(m.WaitingSecs))
	switch {
	case m.MaxAttempts > 0:
		s += fmt.Sprintf(", attempt %d of %d", m.Attempt, m.MaxAttempts)
	case m.Attempt > 1:
		s += fmt.Sprintf(", attempt %d", m.Attempt)
	}
	return s
}

// secs renders a wait: "95 s" under ten minutes, then "12m30s".
func secs(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	if d < 10*time.Minute {
		return fmt.Sprintf("%d s", int(d.Seconds()))
	}
	return d.String()
}
