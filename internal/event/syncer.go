package event

import "reflect"

// The Syncer's record: learnings entering the knowledge store, and what
// it relayed to whom. The "sync" prefix selects them. A sync message's
// events belong to its recipient; a learning's to its source.
const (
	KindLearningExtracted Kind = "sync.learning"
	KindSyncMessageSent   Kind = "sync.sent"
	KindSyncDelivered     Kind = "sync.delivered"
	KindSyncIgnored       Kind = "sync.ignored"
	KindKnowledgeForgot   Kind = "sync.forgot"
)

// LearningExtracted (LearningExtracted): the Syncer found a learning in a
// task's observations (an error it resolved, a search it answered, its own
// statement, the turn-end model pass) and stored it. Merged says it joined
// a learning already known, as a further source. A record_learning call
// is recorded as agent.learning instead.
type LearningExtracted struct {
	LearningID int64    `json:"learning_id"`
	Kind       string   `json:"kind"` // error-resolution | discovery | statement | llm
	Summary    string   `json:"summary"`
	Tags       []string `json:"tags,omitempty"`
	Files      []string `json:"files,omitempty"`
	Merged     bool     `json:"merged,omitempty"`
	Sources    int      `json:"sources"`
	Turn       int      `json:"turn,omitempty"`
}

// EventKind implements Payload.
func (LearningExtracted) EventKind() Kind { return KindLearningExtracted }

// SyncMessageSent (SyncMessageSent): a learning of another task was
// relayed to this one: InjectionID is the message in its queue. (A message
// held for the task's rate limit or cooldown is recorded when it is
// queued.)
type SyncMessageSent struct {
	MessageID   int64   `json:"message_id"`
	LearningID  int64   `json:"learning_id"`
	From        string  `json:"from"`
	Urgency     string  `json:"urgency"` // blocking | helpful | fyi
	Relevance   string  `json:"relevance,omitempty"`
	Score       float64 `json:"score"`
	Message     string  `json:"message"`
	Reason      string  `json:"reason,omitempty"`
	DecidedBy   string  `json:"decided_by"` // persona | rules | hook
	InjectionID int64   `json:"injection_id,omitempty"`
	// LatencyMs is the time from the learning's observation to the
	// message entering the task's queue.
	LatencyMs int64 `json:"latency_ms,omitempty"`
}

// EventKind implements Payload.
func (SyncMessageSent) EventKind() Kind { return KindSyncMessageSent }

// SyncDelivered (SyncDelivered): the task's model took in a sync message.
type SyncDelivered struct {
	MessageID   int64  `json:"message_id"`
	LearningID  int64  `json:"learning_id"`
	From        string `json:"from"`
	Urgency     string `json:"urgency"`
	InjectionID int64  `json:"injection_id"`
	Turn        int    `json:"turn"`
	// LatencyMs is the time from the learning's message being created to
	// its delivery.
	LatencyMs int64 `json:"latency_ms"`
}

// EventKind implements Payload.
func (SyncDelivered) EventKind() Kind { return KindSyncDelivered }

// SyncIgnored (SyncIgnored): a learning was evaluated and not relayed, to
// anyone (the event belongs to its source) or to one task (To names it;
// MessageID when a held message was dropped). Reason is a short code:
// no-candidates, not-relevant (the rules found nobody), persona-skipped,
// threshold, hook-dropped, hook-blocked, backlog-full, stale,
// recipient-finished, forgotten, brief-failed.
type SyncIgnored struct {
	LearningID int64  `json:"learning_id"`
	To         string `json:"to,omitempty"`
	MessageID  int64  `json:"message_id,omitempty"`
	Reason     string `json:"reason"`
	Detail     string `json:"detail,omitempty"`
}

// EventKind implements Payload.
func (SyncIgnored) EventKind() Kind { return KindSyncIgnored }

// KnowledgeForgot: the user removed a learning from the knowledge store.
type KnowledgeForgot struct {
	LearningID int64  `json:"learning_id"`
	Summary    string `json:"summary"`
}

// EventKind implements Payload.
func (KnowledgeForgot) EventKind() Kind { return KindKnowledgeForgot }

// syncerKinds maps the kinds of this file to their payload types.
var syncerKinds = map[Kind]reflect.Type{
	KindLearningExtracted: reflect.TypeFor[LearningExtracted](),
	KindSyncMessageSent:   reflect.TypeFor[SyncMessageSent](),
	KindSyncDelivered:     reflect.TypeFor[SyncDelivered](),
	KindSyncIgnored:       reflect.TypeFor[SyncIgnored](),
	KindKnowledgeForgot:   reflect.TypeFor[KnowledgeForgot](),
}
