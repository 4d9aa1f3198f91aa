package event

import "reflect"

// The Watcher's verdicts and actions on a running task. The "watcher"
// prefix selects them. Each carries the evidence it acted on: the steps of
// the task's observation window that matched.
const (
	KindHealthCheck     Kind = "watcher.health"
	KindWatcherNudge    Kind = "watcher.nudge"
	KindWatcherEscalate Kind = "watcher.escalate"
	KindWatcherPause    Kind = "watcher.pause"
	KindWatcherAbort    Kind = "watcher.abort"
)

// Evidence is one step of a task's observation window that a check
// matched. Step counts the task's steps since it started or resumed
// (tool calls, tool results and assistant texts each count one).
type Evidence struct {
	Step int    `json:"step"`
	Kind string `json:"kind"` // call | result | text | usage | silence
	Tool string `json:"tool,omitempty"`
	// What is a short, display-ready account: the canonical call, the
	// masked start of a result, the start of a text.
	What string `json:"what"`
	// Exact is set when the step repeats the newest one exactly: the same
	// canonical call and byte-equal output (the strongest evidence);
	// otherwise it matched by shape.
	Exact bool `json:"exact,omitempty"`
}

// HealthCheck (TaskHealthCheck): the Watcher's view of a task changed.
// It is recorded on a change of status, check or ladder step only, not on
// every look.
type HealthCheck struct {
	Status     string     `json:"status"` // healthy | struggling | stuck | runaway
	Confidence float64    `json:"confidence"`
	Diagnosis  string     `json:"diagnosis,omitempty"`
	Check      string     `json:"check,omitempty"` // the tier-1 check that found it
	Tier       int        `json:"tier"`            // 1: deterministic checks; 2: the watcher persona agreed or judged
	Ladder     string     `json:"ladder"`          // none | hint | warning | critical | escalated | paused | aborted
	Step       int        `json:"step,omitempty"`
	Degraded   bool       `json:"degraded,omitempty"`
	Evidence   []Evidence `json:"evidence,omitempty"`
}

// EventKind implements Payload.
func (HealthCheck) EventKind() Kind { return KindHealthCheck }

// WatcherNudge: the Watcher told a task, through its message door, what it
// saw and what to try. Severity rises with unheeded nudges.
type WatcherNudge struct {
	Severity    string     `json:"severity"` // hint | warning | critical
	Message     string     `json:"message"`
	Check       string     `json:"check,omitempty"`
	Diagnosis   string     `json:"diagnosis,omitempty"`
	Tier        int        `json:"tier"`
	InjectionID int64      `json:"injection_id,omitempty"`
	Unheeded    int        `json:"unheeded"` // nudges before this one that no progress followed
	Evidence    []Evidence `json:"evidence,omitempty"`
}

// EventKind implements Payload.
func (WatcherNudge) EventKind() Kind { return KindWatcherNudge }

// WatcherEscalate: the Watcher asked for a more capable persona after its
// nudges went unheeded. Refused says why none was given (the top of the
// chain, escalation off, a hook).
type WatcherEscalate struct {
	From      string     `json:"from,omitempty"`
	To        string     `json:"to,omitempty"`
	Diagnosis string     `json:"diagnosis"`
	Check     string     `json:"check,omitempty"`
	Refused   string     `json:"refused,omitempty"`
	Evidence  []Evidence `json:"evidence,omitempty"`
}

// EventKind implements Payload.
func (WatcherEscalate) EventKind() Kind { return KindWatcherEscalate }

// WatcherPause: the Watcher paused a task for its user. Signals are the
// two independent signals it needed ("tier1:<check>", "tier2:<status>",
// "persisted after N nudges").
type WatcherPause struct {
	Diagnosis string     `json:"diagnosis"`
	Check     string     `json:"check,omitempty"`
	Signals   []string   `json:"signals"`
	Evidence  []Evidence `json:"evidence,omitempty"`
}

// EventKind implements Payload.
func (WatcherPause) EventKind() Kind { return KindWatcherPause }

// WatcherAbort: the Watcher stopped a task for good: aborting was
// configured, or a hard limit on spending without progress was hit. Its
// worktree and branch are kept.
type WatcherAbort struct {
	Diagnosis string     `json:"diagnosis"`
	Check     string     `json:"check,omitempty"`
	Reason    string     `json:"reason"` // configured | hard-limit
	Signals   []string   `json:"signals"`
	Evidence  []Evidence `json:"evidence,omitempty"`
}

// EventKind implements Payload.
func (WatcherAbort) EventKind() Kind { return KindWatcherAbort }

// watcherKinds maps the kinds of this file to their payload types.
var watcherKinds = map[Kind]reflect.Type{
	KindHealthCheck:     reflect.TypeFor[HealthCheck](),
	KindWatcherNudge:    reflect.TypeFor[WatcherNudge](),
	KindWatcherEscalate: reflect.TypeFor[WatcherEscalate](),
	KindWatcherPause:    reflect.TypeFor[WatcherPause](),
	KindWatcherAbort:    reflect.TypeFor[WatcherAbort](),
}
