package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Kind names what happened, as dotted words: "task.created", "task.status".
type Kind string

// Payload is the typed body of an event. Each payload type names its kind.
type Payload interface {
	EventKind() Kind
}

// transient is implemented by payloads that are never logged and may be dropped.
type transient interface {
	Transient() bool
}

// Event is one thing that happened.
type Event struct {
	// ID is the event's position in the event log, assigned when it is
	// committed; 0 for transient events.
	ID     int64     `json:"id,omitempty"`
	Time   time.Time `json:"time"`
	Kind   Kind      `json:"kind"`
	TaskID task.ID   `json:"task_id,omitempty"`
	// Payload holds the kind's typed data.
	Payload Payload `json:"-"`
}

// New returns an event of p's kind at now, about the task id (empty when none).
func New(now time.Time, id task.ID, p Payload) Event {
	return Event{Time: now.UTC(), Kind: p.EventKind(), TaskID: id, Payload: p}
}

// Transient reports whether the event is never logged and may be dropped.
func (e Event) Transient() bool {
	t, ok := e.Payload.(transient)
	return ok && t.Transient()
}

// wireEvent is Event as JSON: the payload under "data".
type wireEvent struct {
	ID     int64           `json:"id,omitempty"`
	Time   time.Time       `json:"time"`
	Kind   Kind            `json:"kind"`
	TaskID task.ID         `json:"task_id,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// MarshalJSON encodes the event with its payload under "data".
func (e Event) MarshalJSON() ([]byte, error) {
	data, err := MarshalPayload(e.Payload)
	if err != nil {
		return nil, err
	}
	return json.Marshal(wireEvent{ID: e.ID, Time: e.Time, Kind: e.Kind, TaskID: e.TaskID, Data: data})
}

// UnmarshalJSON decodes an event, choosing the payload type by kind.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w wireEvent
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	p, err := DecodePayload(w.Kind, w.Data)
	if err != nil {
		return err
	}
	*e = Event{ID: w.ID, Time: w.Time, Kind: w.Kind, TaskID: w.TaskID, Payload: p}
	return nil
}

// MarshalPayload encodes a payload as the JSON stored in the log.
func MarshalPayload(p Payload) (json.RawMessage, error) {
	if p == nil {
		return nil, nil
	}
	if u, ok := p.(Unknown); ok {
		return u.Raw, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding %s payload: %w", p.EventKind(), err)
	}
	return b, nil
}

// DecodePayload decodes data as the payload of kind k. A kind this build does not
// know yields Unknown with the raw data, so newer logs stay readable.
func DecodePayload(k Kind, data []byte) (Payload, error) {
	p := newPayload(k)
	if p == nil {
		return Unknown{Kind: k, Raw: bytes.Clone(data)}, nil
	}
	if len(data) == 0 || string(data) == "null" {
		return deref(p), nil
	}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, fmt.Errorf("decoding %s payload: %w", k, err)
	}
	return deref(p), nil
}

// Unknown is the payload of a kind this build does not know.
type Unknown struct {
	Kind Kind
	Raw  json.RawMessage
}

// EventKind returns the kind the payload was recorded with.
func (u Unknown) EventKind() Kind { return u.Kind }

// MarshalJSON returns the raw payload.
func (u Unknown) MarshalJSON() ([]byte, error) {
	if len(u.Raw) == 0 {
		return []byte("null"), nil
	}
	return u.Raw, nil
}

// Matches reports whether kind k is selected by pattern: the same kind, or a
// dotted prefix of it ("task" selects "task.created" and "task.status").
func Matches(pattern string, k Kind) bool {
	if pattern == "" || pattern == string(k) {
		return true
	}
	return strings.HasPrefix(string(k), pattern+".")
}

// Filter selects events. The zero Filter selects everything.
type Filter struct {
	TaskID task.ID
	// Kinds are patterns as in Matches; empty selects every kind.
	Kinds []string
}

// Match reports whether e passes the filter.
func (f Filter) Match(e Event) bool {
	if f.TaskID != "" && e.TaskID != f.TaskID {
		return false
	}
	if len(f.Kinds) == 0 {
		return true
	}
	for _, k := range f.Kinds {
		if Matches(k, e.Kind) {
			return true
		}
	}
	return false
}

// Query selects logged events from the event log.
type Query struct {
	Filter
	// AfterID selects events with a larger ID.
	AfterID int64
	// Since selects events at or after this time; zero means no bound.
	Since time.Time
	// Limit caps the number returned; 0 means the reader's default.
	Limit int
}
