// Package inject is the one type of a message for a task: what the
// executor's door (executor.Inject) takes, what a task's durable queue
// holds (store), what an engine is handed at a turn boundary and renders
// for the model (engine.Render). Its kind, urgency, source and outcome are
// typed; only free-form attributes stay strings. It is pure: no I/O.
//
// Stored and on the wire an injection keeps the shape it always had: its
// kind's name, and one attribute map in which "urgency" and "outcome" sit
// beside the free-form attributes. ParseAttrs splits such a map into the
// typed fields once, where it is read (the store, JSON); AttrMap joins
// them again.
package inject

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Kind is what an injected message is.
type Kind string

// Injection kinds. Every way of reaching a running task is one of them and
// goes through the executor's one door (executor.Inject).
const (
	// Message is a user's message (an answer to ask_user, or direction).
	Message Kind = "message"
	// Nudge is a supervisor's nudge; attribute severity.
	Nudge Kind = "nudge"
	// Sync is a learning relayed from another task; attribute from, and
	// an Urgency.
	Sync Kind = "sync"
	// Rebase tells the task that main moved, with an Urgency; a Blocking
	// one without an Outcome asks the executor to rebase the branch at the
	// boundary, and its Outcome is what the model then sees.
	Rebase Kind = "rebase"
	// Interjection is from a watcher session (NewInterjection);
	// attributes from (the session's name), authority (peer or
	// supervisor) and session (its id).
	Interjection Kind = "interjection"
	// Pause stops the task at its next boundary. The model never sees it.
	Pause Kind = "pause"
	// Persona changes the persona the task runs as (an escalation);
	// attributes from, to, by, reason. The executor carries the request
	// out at the boundary; the model sees only the outcome (Outcome set).
	Persona Kind = "persona"
)

// Kinds lists the injection kinds.
func Kinds() []Kind { return []Kind{Message, Nudge, Sync, Rebase, Interjection, Pause, Persona} }

// ParseKind returns the kind named s ("" is Message).
func ParseKind(s string) (Kind, error) {
	if s == "" {
		return Message, nil
	}
	for _, k := range Kinds() {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, 0, len(Kinds()))
	for _, k := range Kinds() {
		names = append(names, string(k))
	}
	return "", fmt.Errorf("%q is not an injection kind; want one of %s", s, strings.Join(names, ", "))
}

// Urgency is how much a sync message or a rebase notice matters to the
// task. "" is not said.
type Urgency string

// Urgencies.
const (
	FYI      Urgency = "fyi"
	Helpful  Urgency = "helpful"
	Blocking Urgency = "blocking"
)

// Outcome is the result of a request the executor carried out at a
// boundary (a blocking rebase, a change of persona). "" is a request not
// yet carried out, or an injection that is no request.
type Outcome string

// Outcomes. A rebase ends Rebased, UpToDate, Conflict or Failed (Done when
// the rebaser did not say); a change of persona ends Done.
const (
	Done     Outcome = "done"
	Rebased  Outcome = "rebased"
	UpToDate Outcome = "up_to_date"
	Conflict Outcome = "conflict"
	Failed   Outcome = "failed"
)

// Source says who sends an injection: one of the senders below, or a task
// (FromTask).
type Source string

// The known senders.
const (
	FromUser        Source = "user"
	FromWatcher     Source = "watcher"
	FromSyncer      Source = "syncer"
	FromMainWatcher Source = "main-watcher"
	FromMergeQueue  Source = "merge-queue"
	FromWorkflow    Source = "workflow"
)

// FromSession is the source of a watcher session's interjection: "watch:"
// and the session's id.
func FromSession(id string) Source { return Source("watch:" + id) }

// NewInterjection returns a watcher session's interjection for a task:
// kind Interjection, with its provenance in the attributes the model sees
// in the wrapper (from: the session's name, authority: peer or
// supervisor, session: its id). Urgent interrupts the turn in flight;
// otherwise it waits for the task's next boundary.
func NewInterjection(id task.ID, session, name, authority, text string, urgent bool) Injection {
	return Injection{TaskID: id, Kind: Interjection, Source: FromSession(session), Urgent: urgent, Text: text,
		Attrs: map[string]string{"from": name, "authority": authority, "session": session}}
}

// FromTask is the source of an injection another task sends.
func FromTask(id task.ID) Source { return Source(id) }

// The attribute names the typed fields have in the stored and wire form.
const (
	urgencyAttr = "urgency"
	outcomeAttr = "outcome"
)

// Injection is a message for a task: given to executor.Inject, held in the
// task's durable queue until its next turn boundary, delivered there once.
type Injection struct {
	// ID is the queue's number for it (0 until stored).
	ID     int64
	TaskID task.ID
	Kind   Kind
	// Source says who sends it; "" is FromUser.
	Source Source
	// Urgency is how much it matters (sync messages, rebase notices).
	Urgency Urgency
	// Outcome is the result of a request carried out (rebase, persona).
	Outcome Outcome
	// Attrs are the other attributes of the kind (severity, from, main,
	// ...), free-form, shown in the wrapper the model sees. They never hold
	// "urgency" or "outcome" once parsed (see ParseAttrs).
	Attrs map[string]string
	Text  string
	// Urgent interrupts the turn in flight.
	Urgent bool
	// Quiet leaves a task that waits for its user waiting: the message is
	// read when the task next runs (a rebase notice is no reason to wake
	// it and spend a model call). It is the sender's wish at Inject and is
	// not stored.
	Quiet       bool
	CreatedAt   time.Time
	DeliveredAt *time.Time
	// ReturnedAt is when the task finished with the injection undelivered:
	// it is out of the queue and was reported back (never both set).
	ReturnedAt *time.Time
}

// ParseAttrs sets the typed fields from an attribute map in the stored or
// wire form: "urgency" and "outcome" become Urgency and Outcome (their
// values kept as they are, so that a value this version does not know is
// neither lost nor taken for a request), every other attribute goes to
// Attrs. m is not modified.
func (inj *Injection) ParseAttrs(m map[string]string) {
	inj.Urgency, inj.Outcome, inj.Attrs = "", "", nil
	for k, v := range m {
		switch k {
		case urgencyAttr:
			inj.Urgency = Urgency(v)
		case outcomeAttr:
			inj.Outcome = Outcome(v)
		default:
			if inj.Attrs == nil {
				inj.Attrs = make(map[string]string, len(m))
			}
			inj.Attrs[k] = v
		}
	}
}

// AttrMap returns the attributes in the stored and wire form: Attrs with
// the typed fields that are set, under "urgency" and "outcome" (the typed
// fields win over stray keys of those names in Attrs). It is nil when
// there are none.
func (inj Injection) AttrMap() map[string]string {
	if len(inj.Attrs) == 0 && inj.Urgency == "" && inj.Outcome == "" {
		return nil
	}
	m := maps.Clone(inj.Attrs)
	if m == nil {
		m = make(map[string]string, 2)
	}
	if inj.Urgency != "" {
		m[urgencyAttr] = string(inj.Urgency)
	}
	if inj.Outcome != "" {
		m[outcomeAttr] = string(inj.Outcome)
	}
	return m
}

// HoldsEnd reports whether inj, waiting when its task is about to end
// (complete_task, fail_task), must reach the model first: what the user
// sent (a message, a nudge), a pause from anyone, and anything urgent. The
// machinery's notices (a sync message, a rebase notice, a Watcher's
// nudge) do not hold a finished task back; if it ends first they are
// returned with it.
func (inj Injection) HoldsEnd() bool {
	return inj.Source == FromUser || inj.Source == "" || inj.Kind == Pause || inj.Urgent
}

// IsBlockingRebase reports whether inj asks the executor to rebase the
// task's branch itself (not yet done).
func (inj Injection) IsBlockingRebase() bool {
	return inj.Kind == Rebase && inj.Urgency == Blocking && inj.Outcome == ""
}

// IsPersonaRequest reports whether inj asks the executor to change the
// task's persona (not yet done).
func (inj Injection) IsPersonaRequest() bool {
	return inj.Kind == Persona && inj.Outcome == ""
}
