package event

import "reflect"

// Watcher sessions' record: sessions added, paused, resumed and ended, and
// every evaluation with what came of it. The "watch" prefix selects them.
// An evaluation's events belong to the task it evaluated; a session's own
// changes belong to its one task, or to none.
const (
	KindWatchSession     Kind = "watch.session"
	KindWatchEvaluation  Kind = "watch.evaluation"
	KindWatchInterjected Kind = "watch.interjection"
	KindWatchContinued   Kind = "watch.continue"
	KindWatchDelivered   Kind = "watch.delivered"
)

// WatchSession (WatchSession): a watcher session changed. Action is added,
// paused, resumed, ended or removed; Status the session's status after it.
type WatchSession struct {
	Session string `json:"session"`
	Name    string `json:"name"`
	Action  string `json:"action"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
}

// EventKind implements Payload.
func (WatchSession) EventKind() Kind { return KindWatchSession }

// WatchEvaluation (WatchEvaluation): a session evaluated the task's recent
// activity. Decision is interject, continue or failed.
type WatchEvaluation struct {
	Session      string  `json:"session"`
	Name         string  `json:"name"`
	EvaluationID int64   `json:"evaluation_id"`
	Decision     string  `json:"decision"`
	Observations int     `json:"observations"`
	CostUSD      float64 `json:"cost_usd"`
	DurationMs   int64   `json:"duration_ms"`
	Error        string  `json:"error,omitempty"`
}

// EventKind implements Payload.
func (WatchEvaluation) EventKind() Kind { return KindWatchEvaluation }

// WatchInterjected (WatchInterjected): a session interjected. InjectionID
// is the interjection in the task's queue; 0 with Undelivered when the
// task had ended and nothing was sent. LatencyMs is the time from the
// task's breakpoint to the interjection entering its queue, the model's
// time excluded.
type WatchInterjected struct {
	Session     string `json:"session"`
	Name        string `json:"name"`
	Authority   string `json:"authority"`
	Urgent      bool   `json:"urgent"`
	Content     string `json:"content"`
	InjectionID int64  `json:"injection_id,omitempty"`
	Undelivered string `json:"undelivered,omitempty"`
	LatencyMs   int64  `json:"latency_ms"`
}

// EventKind implements Payload.
func (WatchInterjected) EventKind() Kind { return KindWatchInterjected }

// WatchContinued (WatchContinued): a session saw nothing to say; Note is
// what it noted for itself.
type WatchContinued struct {
	Session string `json:"session"`
	Name    string `json:"name"`
	Note    string `json:"note,omitempty"`
}

// EventKind implements Payload.
func (WatchContinued) EventKind() Kind { return KindWatchContinued }

// WatchDelivered (WatchDelivered): the receipt of an interjection: the
// task's model took it in at turn Turn.
type WatchDelivered struct {
	Session     string `json:"session"`
	InjectionID int64  `json:"injection_id"`
	Turn        int    `json:"turn"`
	LatencyMs   int64  `json:"latency_ms"`
}

// EventKind implements Payload.
func (WatchDelivered) EventKind() Kind { return KindWatchDelivered }

// watchKinds maps the kinds of this file to their payload types.
var watchKinds = map[Kind]reflect.Type{
	KindWatchSession:     reflect.TypeFor[WatchSession](),
	KindWatchEvaluation:  reflect.TypeFor[WatchEvaluation](),
	KindWatchInterjected: reflect.TypeFor[WatchInterjected](),
	KindWatchContinued:   reflect.TypeFor[WatchContinued](),
	KindWatchDelivered:   reflect.TypeFor[WatchDelivered](),
}
