package task

// Manifest is a task's sandbox manifest (seed 003's SandboxManifest): what
// the agent may read, write and run, the environment it gets, and how long
// it may stay silent or run in all. It is evaluated when the task first
// starts (package lifecycle), stored with the task, and widened only by a
// recovered permission denial, never beyond the user's sandbox policy.
//
// Paths are relative to the task's worktree ("." is all of it) or absolute
// (then within the paths the user's sandbox.write allows). Tools are named
// in the manifest's own vocabulary (Read, Write, Edit, Glob, Grep, Bash,
// WebFetch, ...), which each engine maps onto its CLI's flags. Commands are
// prefixes of the commands Bash may run ("go test", "git"); an empty list
// with Bash allowed means any command the deny-list lets through. Env and
// Secrets are variable names, never values: a secret's value is looked up
// where the engine starts its CLI and never stored.
type Manifest struct {
	Readable   []string   `json:"readable"`
	Writable   []string   `json:"writable"`
	Tools      []string   `json:"tools"`
	Commands   []string   `json:"commands,omitempty"`
	Env        []string   `json:"env,omitempty"`
	Secrets    []string   `json:"secrets,omitempty"`
	Complexity Complexity `json:"complexity"`
	// IdleTimeoutSecs stops a run that emits no observation for this long;
	// TotalTimeoutSecs one that runs this long in all (each run of the
	// task: a resumed task has the whole time again). Zero: no limit.
	IdleTimeoutSecs  int `json:"idle_timeout_secs"`
	TotalTimeoutSecs int `json:"total_timeout_secs"`
	// Source says how it was made: "default" (the deterministic rules),
	// "model" (the router tier's pass over the default), with "+recovered"
	// once a permission denial widened it.
	Source string `json:"source"`
	// Note says why the model pass was not used, when it was asked for.
	Note string `json:"note,omitempty"`
	// Escalations counts the widenings made by recovering from permission
	// denials.
	Escalations int `json:"escalations,omitempty"`
	// Pending is a widening the user was asked about (the interactive
	// recovery strategy): their answer applies or drops it.
	Pending *Grant `json:"pending,omitempty"`
}

// Grant is a widening of a manifest: a tool, a writable or readable path,
// a command prefix (any of them may be empty).
type Grant struct {
	Tool     string `json:"tool,omitempty"`
	Writable string `json:"writable,omitempty"`
	Readable string `json:"readable,omitempty"`
	Command  string `json:"command,omitempty"`
}

// Complexity is a task's assessed complexity, which sets its timeouts.
type Complexity string

// Complexities.
const (
	Low    Complexity = "low"
	Medium Complexity = "medium"
	High   Complexity = "high"
)

// Valid reports whether c is one of the complexities.
func (c Complexity) Valid() bool { return c == Low || c == Medium || c == High }
