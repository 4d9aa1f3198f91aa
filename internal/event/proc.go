package event

// KindProcLeftoverStopped: processes a task's commands started outlived the
// command, found by the daemon and stopped (see ProcLeftoverStopped).
const KindProcLeftoverStopped Kind = "proc.leftover_stopped"

// ProcLeftoverStopped records processes of a task's command that were still
// running when nothing should have been: left by a daemon that died while
// the command ran (found at the next start), or still there when the task's
// run ended. They were stopped with SIGTERM, then SIGKILL.
type ProcLeftoverStopped struct {
	// Command is the command that started them, as it was run.
	Command string `json:"command"`
	// Reason says when they were found.
	Reason    string        `json:"reason"`
	Processes []ProcStopped `json:"processes"`
	// Survivors did not exit even after SIGKILL within the bound (a
	// process in uninterruptible sleep); the next start looks again.
	Survivors []ProcStopped `json:"survivors,omitempty"`
}

// ProcStopped is one stopped process: its pid and command line.
type ProcStopped struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
}

// EventKind implements Payload.
func (ProcLeftoverStopped) EventKind() Kind { return KindProcLeftoverStopped }
