package event

import "reflect"

// Persona and hook observations: which persona a task runs as and why,
// escalations, the user's hooks acting on a decision or failing, and the
// phases of multi-persona workflows. The "persona", "hook" and "workflow"
// prefixes select them.
const (
	KindPersonaSelected   Kind = "persona.selected"
	KindPersonaEscalated  Kind = "persona.escalated"
	KindEscalationRefused Kind = "persona.escalation_refused"
	KindHookActed         Kind = "hook.acted"
	KindHookFailed        Kind = "hook.failed"
	KindPhaseStarted      Kind = "workflow.phase_started"
	KindPhaseFinished     Kind = "workflow.phase_finished"
)

// PersonaSelected: the task was given its persona. Method is how: explicit
// (the user named it), router (the router's suggestion matched), fallback
// (the default persona, Reason says why the router's answer was not used)
// or hook (a PersonaSelected hook changed it). Category, Complexity and
// Suggested are the router's answer when there was one; Tags are the tags
// it added to the task.
type PersonaSelected struct {
	Persona    string   `json:"persona"`
	Method     string   `json:"method"`
	Reason     string   `json:"reason,omitempty"`
	Category   string   `json:"category,omitempty"`
	Complexity string   `json:"complexity,omitempty"`
	Suggested  string   `json:"suggested,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Model      string   `json:"model,omitempty"`
	DurationMs int64    `json:"duration_ms,omitempty"`
}

// EventKind implements Payload.
func (PersonaSelected) EventKind() Kind { return KindPersonaSelected }

// PersonaEscalated: the task now runs as To (with its system prompt and
// model), keeping its conversation and worktree. By is who asked (user,
// watcher).
type PersonaEscalated struct {
	From      string `json:"from"`
	To        string `json:"to"`
	FromModel string `json:"from_model,omitempty"`
	ToModel   string `json:"to_model,omitempty"`
	Reason    string `json:"reason,omitempty"`
	By        string `json:"by"`
	Turn      int    `json:"turn,omitempty"`
}

// EventKind implements Payload.
func (PersonaEscalated) EventKind() Kind { return KindPersonaEscalated }

// EscalationRefused: an escalation asked for could not be carried out (the
// top of the chain, a persona no longer assignable, escalation off).
type EscalationRefused struct {
	From   string `json:"from"`
	To     string `json:"to,omitempty"`
	Reason string `json:"reason"`
	By     string `json:"by"`
}

// EventKind implements Payload.
func (EscalationRefused) EventKind() Kind { return KindEscalationRefused }

// HookActed: a user's hook changed or blocked a decision.
type HookActed struct {
	Point   string `json:"point"`
	Command string `json:"command"`
	Action  string `json:"action"` // modified | blocked
	Reason  string `json:"reason,omitempty"`
}

// EventKind implements Payload.
func (HookActed) EventKind() Kind { return KindHookActed }

// HookFailed: a user's hook failed, timed out or replied with something
// unusable; the decision went ahead as if it had not run.
type HookFailed struct {
	Point      string `json:"point"`
	Command    string `json:"command"`
	Error      string `json:"error"`
	ExitCode   int    `json:"exit_code,omitempty"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	DurationMs int64  `json:"duration_ms"`
}

// EventKind implements Payload.
func (HookFailed) EventKind() Kind { return KindHookFailed }

// PhaseStarted: a task running one of a workflow's phases started (a
// parallel review records one per reviewer). It is recorded on the
// workflow task.
type PhaseStarted struct {
	Index    int      `json:"index"`
	Phase    string   `json:"phase"`
	Personas []string `json:"personas"`
	Tasks    []string `json:"tasks"`
}

// EventKind implements Payload.
func (PhaseStarted) EventKind() Kind { return KindPhaseStarted }

// PhaseFinished: a phase's child task finished; a review's findings are
// carried to the next phase.
type PhaseFinished struct {
	Index    int       `json:"index"`
	Phase    string    `json:"phase"`
	Task     string    `json:"task"`
	Persona  string    `json:"persona"`
	Status   string    `json:"status"`
	Summary  string    `json:"summary,omitempty"`
	Verdict  string    `json:"verdict,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
}

// Finding is one point a review phase raised.
type Finding struct {
	Severity string `json:"severity"` // critical | important | nitpick
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message"`
}

// EventKind implements Payload.
func (PhaseFinished) EventKind() Kind { return KindPhaseFinished }

// personaKinds maps the kinds of this file to their payload types.
var personaKinds = map[Kind]reflect.Type{
	KindPersonaSelected:   reflect.TypeFor[PersonaSelected](),
	KindPersonaEscalated:  reflect.TypeFor[PersonaEscalated](),
	KindEscalationRefused: reflect.TypeFor[EscalationRefused](),
	KindHookActed:         reflect.TypeFor[HookActed](),
	KindHookFailed:        reflect.TypeFor[HookFailed](),
	KindPhaseStarted:      reflect.TypeFor[PhaseStarted](),
	KindPhaseFinished:     reflect.TypeFor[PhaseFinished](),
}

// personaPayload is newPayload for the kinds of this file, of watcher.go,
// syncer.go, lifecycle.go and watch.go.
func personaPayload(k Kind) any {
	if t, ok := personaKinds[k]; ok {
		return reflect.New(t).Interface()
	}
	if t, ok := watcherKinds[k]; ok {
		return reflect.New(t).Interface()
	}
	if t, ok := syncerKinds[k]; ok {
		return reflect.New(t).Interface()
	}
	if t, ok := lifecycleKinds[k]; ok {
		return reflect.New(t).Interface()
	}
	if t, ok := watchKinds[k]; ok {
		return reflect.New(t).Interface()
	}
	if t, ok := clusterKinds[k]; ok {
		return reflect.New(t).Interface()
	}
	return nil
}

// derefPersona turns the pointer personaPayload made back into a value.
func derefPersona(p any) (Payload, bool) {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, false
	}
	pl, ok := v.Elem().Interface().(Payload)
	if !ok {
		return nil, false
	}
	_, persona := personaKinds[pl.EventKind()]
	_, watcher := watcherKinds[pl.EventKind()]
	_, syncer := syncerKinds[pl.EventKind()]
	_, lifecycle := lifecycleKinds[pl.EventKind()]
	_, watch := watchKinds[pl.EventKind()]
	_, cluster := clusterKinds[pl.EventKind()]
	if !persona && !watcher && !syncer && !lifecycle && !watch && !cluster {
		return nil, false
	}
	return pl, true
}
