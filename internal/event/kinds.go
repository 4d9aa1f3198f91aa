package event

import "github.com/neuraphage/neuraphage-go/internal/task"

// The kinds of the foundation: task lifecycle and daemon life.
const (
	KindTaskCreated       Kind = "task.created"
	KindTaskStatus        Kind = "task.status"
	KindTaskMessage       Kind = "task.message"
	KindTaskReturned      Kind = "task.messages_returned"
	KindTaskDependency    Kind = "task.dependency"
	KindDaemonStarted     Kind = "daemon.started"
	KindDaemonStopping    Kind = "daemon.stopping"
	KindDaemonRecovered   Kind = "daemon.recovered"
	KindDaemonPermissions Kind = "daemon.permissions"
	KindDaemonDiskFull    Kind = "daemon.disk_full"
	KindTaskSandbox       Kind = "task.sandbox"
)

// newPayload returns a pointer to a zero payload of kind k, or nil when the kind
// is not known to this build. Later capabilities add their kinds here.
func newPayload(k Kind) any {
	switch k {
	case KindTaskCreated:
		return &TaskCreated{}
	case KindTaskStatus:
		return &TaskStatus{}
	case KindTaskMessage:
		return &TaskMessage{}
	case KindTaskReturned:
		return &TaskReturned{}
	case KindTaskDependency:
		return &TaskDependency{}
	case KindDaemonStarted:
		return &DaemonStarted{}
	case KindDaemonStopping:
		return &DaemonStopping{}
	case KindDaemonRecovered:
		return &DaemonRecovered{}
	case KindDaemonPermissions:
		return &DaemonPermissions{}
	case KindDaemonDiskFull:
		return &DiskFull{}
	case KindProcLeftoverStopped:
		return &ProcLeftoverStopped{}
	case KindTaskSandbox:
		return &TaskSandbox{}
	}
	if p := gitPayload(k); p != nil {
		return p
	}
	if p := personaPayload(k); p != nil {
		return p
	}
	return observationPayload(k)
}

// deref turns the pointer newPayload made back into the value payload.
func deref(p any) Payload {
	switch v := p.(type) {
	case *TaskCreated:
		return *v
	case *TaskStatus:
		return *v
	case *TaskMessage:
		return *v
	case *TaskReturned:
		return *v
	case *TaskDependency:
		return *v
	case *DaemonStarted:
		return *v
	case *DaemonStopping:
		return *v
	case *DaemonRecovered:
		return *v
	case *DaemonPermissions:
		return *v
	case *DiskFull:
		return *v
	case *ProcLeftoverStopped:
		return *v
	case *TaskSandbox:
		return *v
	}
	if o, ok := derefObservation(p); ok {
		return o
	}
	if g, ok := derefGit(p); ok {
		return g
	}
	if pp, ok := derefPersona(p); ok {
		return pp
	}
	return p.(Payload)
}

// TaskCreated records a new task.
type TaskCreated struct {
	Description string      `json:"description"`
	Status      task.Status `json:"status"`
	Priority    int         `json:"priority"`
	Tags        []string    `json:"tags,omitempty"`
	ParentID    task.ID     `json:"parent_id,omitempty"`
	Persona     string      `json:"persona,omitempty"`
	Engine      string      `json:"engine,omitempty"`
	Repo        string      `json:"repo,omitempty"`
}

// EventKind implements Payload.
func (TaskCreated) EventKind() Kind { return KindTaskCreated }

// TaskStatus records a change of a task's status.
type TaskStatus struct {
	From   task.Status `json:"from"`
	To     task.Status `json:"to"`
	Reason string      `json:"reason,omitempty"`
}

// EventKind implements Payload.
func (TaskStatus) EventKind() Kind { return KindTaskStatus }

// TaskMessage records an injection queued for a task (a user's message, a
// nudge, a sync message, a notice, a pause), by its id in the task's queue.
type TaskMessage struct {
	InjectionID int64  `json:"injection_id"`
	Source      string `json:"source"`
	// Kind is the injection's kind (message, nudge, sync, rebase,
	// interjection, pause); empty in logs written before kinds existed.
	Kind   string            `json:"kind,omitempty"`
	Attrs  map[string]string `json:"attrs,omitempty"`
	Urgent bool              `json:"urgent,omitempty"`
	Text   string            `json:"text"`
}

// EventKind implements Payload.
func (TaskMessage) EventKind() Kind { return KindTaskMessage }

// TaskReturned records messages a task never saw: it finished (Status)
// while they waited in its queue. They leave the queue, are reported back
// with this event and listed as returned by `task show`, in the same commit
// as the move to Status.
type TaskReturned struct {
	Status       task.Status `json:"status"`
	InjectionIDs []int64     `json:"injection_ids"`
	Kinds        []string    `json:"kinds"`
	// Texts are the messages' first lines, for a reader of the log.
	Texts []string `json:"texts"`
}

// EventKind implements Payload.
func (TaskReturned) EventKind() Kind { return KindTaskReturned }

// TaskDependency records that a task now waits for a blocker.
type TaskDependency struct {
	Blocker task.ID `json:"blocker"`
}

// EventKind implements Payload.
func (TaskDependency) EventKind() Kind { return KindTaskDependency }

// DiskFull says the store's writes fail for want of space (Recovered
// false: published live only, since the log cannot take it) or that space
// returned (Recovered true: logged). Meanwhile the runs that could not
// store a step wait in memory, retrying, and go on where they were.
type DiskFull struct {
	Recovered bool `json:"recovered,omitempty"`
	// Err is the failed write's error (while full).
	Err string `json:"err,omitempty"`
	// Tasks are the tasks whose runs waited.
	Tasks []task.ID `json:"tasks,omitempty"`
	// WaitedMs is how long the disk was full (once recovered).
	WaitedMs int64 `json:"waited_ms,omitempty"`
}

// EventKind implements Payload.
func (DiskFull) EventKind() Kind { return KindDaemonDiskFull }

// Transient implements Payload: only the recovery is logged (the log
// cannot take a write while the disk is full).
func (p DiskFull) Transient() bool { return !p.Recovered }

// DaemonStarted records a daemon start.
type DaemonStarted struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
}

// EventKind implements Payload.
func (DaemonStarted) EventKind() Kind { return KindDaemonStarted }

// DaemonPermissions records the daemon's directories and files that it found
// readable by others at start and restricted to its owner.
type DaemonPermissions struct {
	Corrected []ModeCorrection `json:"corrected"`
}

// ModeCorrection is one path whose mode was tightened: From and To are octal
// permission bits ("0755" → "0700").
type ModeCorrection struct {
	Path string `json:"path"`
	From string `json:"from"`
	To   string `json:"to"`
}

// EventKind implements Payload.
func (DaemonPermissions) EventKind() Kind { return KindDaemonPermissions }

// TaskSandbox records, once per task and daemon run, that the task's
// commands run with less confinement than configured: Mode is the sandbox
// mode (as `daemon status` shows it), Note says what is not enforced.
type TaskSandbox struct {
	Mode string `json:"mode"`
	Note string `json:"note"`
}

// EventKind implements Payload.
func (TaskSandbox) EventKind() Kind { return KindTaskSandbox }

// DaemonStopping records an orderly shutdown.
type DaemonStopping struct {
	Reason string `json:"reason"`
}

// EventKind implements Payload.
func (DaemonStopping) EventKind() Kind { return KindDaemonStopping }

// DaemonRecovered records what a start found left over from the previous run.
type DaemonRecovered struct {
	// ResumePending lists the tasks that were running and will resume.
	ResumePending []task.ID `json:"resume_pending,omitempty"`
}

// EventKind implements Payload.
func (DaemonRecovered) EventKind() Kind { return KindDaemonRecovered }
