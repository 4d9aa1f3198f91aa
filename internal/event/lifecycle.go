package event

import "reflect"

// Seed 003's lifecycle around any engine (package lifecycle): the task's
// sandbox manifest made, its engine started, progress snapshots, timeouts,
// permission denials and their recovery. The "lifecycle" prefix selects
// them, but for PermissionDenied, an observation an engine emits (prefix
// "agent").
const (
	KindSandboxCreated   Kind = "lifecycle.sandbox_created"
	KindEngineStarted    Kind = "lifecycle.engine_started"
	KindProgress         Kind = "lifecycle.progress"
	KindTimeout          Kind = "lifecycle.timeout"
	KindPermissionDenied Kind = "agent.permission_denied"
	KindPermissionError  Kind = "lifecycle.permission_error"
	KindRecoveryAttempt  Kind = "lifecycle.recovery_attempt"
)

// SandboxCreated: the task's sandbox manifest was evaluated (Source:
// default, or model) and its worktree is where it runs.
type SandboxCreated struct {
	Dir        string   `json:"dir"`
	Source     string   `json:"source"`
	Complexity string   `json:"complexity"`
	Tools      []string `json:"tools"`
	Writable   []string `json:"writable"`
	// IdleSecs and TotalSecs are the timeouts the run is held to.
	IdleSecs  int `json:"idle_secs"`
	TotalSecs int `json:"total_secs"`
	// Note says why the model's manifest was not used, when asked for.
	Note string `json:"note,omitempty"`
}

// EventKind implements Payload.
func (SandboxCreated) EventKind() Kind { return KindSandboxCreated }

// EngineStarted: the task's engine began a run in Dir.
type EngineStarted struct {
	Engine string `json:"engine"`
	Dir    string `json:"dir"`
	// Resumed is set when the run continues from stored state.
	Resumed bool `json:"resumed,omitempty"`
}

// EventKind implements Payload.
func (EngineStarted) EventKind() Kind { return KindEngineStarted }

// Progress is a snapshot of a run's progress (seed 003's ProgressState),
// taken at each turn's end: counts of what the run's observations showed.
type Progress struct {
	Turn         int   `json:"turn"`
	FilesRead    int   `json:"files_read"`
	FilesWritten int   `json:"files_written"`
	Commits      int   `json:"commits"`
	OutputLines  int   `json:"output_lines"`
	Errors       int   `json:"errors"`
	Denials      int   `json:"permission_denials"`
	ElapsedMs    int64 `json:"elapsed_ms"`
	// IdleMs is how long before the snapshot the run last reported
	// anything.
	IdleMs int64 `json:"idle_ms"`
}

// EventKind implements Payload.
func (Progress) EventKind() Kind { return KindProgress }

// Timeout: a timer stopped the run. Which is "idle" (nothing reported
// for LimitSecs) or "total" (the run lasted LimitSecs).
type Timeout struct {
	Which     string `json:"which"`
	LimitSecs int    `json:"limit_secs"`
	// IdleMs is how long the run had been silent when it was stopped.
	IdleMs int64 `json:"idle_ms"`
}

// EventKind implements Payload.
func (Timeout) EventKind() Kind { return KindTimeout }

// PermissionDenied is an observation: the engine's agent was refused a
// tool (Tool), a path (Path, with Write set for a write) or a command
// (Command) by its CLI's permissions or by the sandbox.
type PermissionDenied struct {
	Turn    int    `json:"turn"`
	Tool    string `json:"tool"`
	Path    string `json:"path,omitempty"`
	Write   bool   `json:"write,omitempty"`
	Command string `json:"command,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// EventKind implements Payload.
func (PermissionDenied) EventKind() Kind { return KindPermissionDenied }

// PermissionError: a denial was judged. Fix is the widening of the
// manifest that would allow it, empty with Reason when none may be made
// (beyond the user's policy, or the escalations spent).
type PermissionError struct {
	Tool    string `json:"tool"`
	Path    string `json:"path,omitempty"`
	Command string `json:"command,omitempty"`
	Fix     string `json:"fix,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// EventKind implements Payload.
func (PermissionError) EventKind() Kind { return KindPermissionError }

// RecoveryAttempt: the recovery strategy acted on a denial. Action is
// "retry" (the manifest widened by Fix, the session resumed), "ask" (the
// task waits for its user's answer), "give_up", or, for the user's
// answer, "declined" (a "retry" when they allowed it).
type RecoveryAttempt struct {
	Strategy   string `json:"strategy"`
	Action     string `json:"action"`
	Fix        string `json:"fix,omitempty"`
	Escalation int    `json:"escalation"`
}

// EventKind implements Payload.
func (RecoveryAttempt) EventKind() Kind { return KindRecoveryAttempt }

var lifecycleKinds = map[Kind]reflect.Type{
	KindSandboxCreated:   reflect.TypeFor[SandboxCreated](),
	KindEngineStarted:    reflect.TypeFor[EngineStarted](),
	KindProgress:         reflect.TypeFor[Progress](),
	KindTimeout:          reflect.TypeFor[Timeout](),
	KindPermissionDenied: reflect.TypeFor[PermissionDenied](),
	KindPermissionError:  reflect.TypeFor[PermissionError](),
	KindRecoveryAttempt:  reflect.TypeFor[RecoveryAttempt](),
	KindNotifyFailed:     reflect.TypeFor[NotifyFailed](),
}
