package supervise

import (
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Health is the Watcher's view of one task.
type Health struct {
	TaskID task.ID
	// Status is healthy, struggling, stuck or runaway; unknown for a task
	// the Watcher has not seen run; unsupervised for a task created with
	// --no-supervision.
	Status     string
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
	// The window's counters since the task started or resumed.
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
