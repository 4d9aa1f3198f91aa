package knowledge

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Kind says how a learning was found.
type Kind string

// The kinds of learning. They are the store's learning kinds.
const (
	// Explicit: the agent recorded it (record_learning).
	Explicit Kind = "explicit"
	// ErrorResolution: a call failed, files changed, and the same call
	// (same tool, same target) then succeeded.
	ErrorResolution Kind = "error-resolution"
	// Discovery: a glob or grep located something in one to three files.
	Discovery Kind = "discovery"
	// Statement: the agent said it found something out ("turns out …",
	// "Note: …").
	Statement Kind = "statement"
	// Model: the turn-end model pass over TurnDigest.
	Model Kind = "llm"
)

// Candidate is a learning an Extractor (or ParseModelLearnings) found, for
// the store to deduplicate and keep.
type Candidate struct {
	Kind Kind
	// Summary is one line of at most 200 characters, except for Explicit
	// learnings, which carry the agent's summary as it was recorded.
	Summary string
	// Detail is at most 1000 characters; it may be empty.
	Detail string
	Tags   []string
	// Files are the paths the learning is about, as the agent and its tools
	// wrote them: worktree-relative for the native tools (external CLIs may
	// print absolute paths, which the caller can relativize).
	Files []string
	// Turn is the task's turn it was found in.
	Turn int
}

// ExtractConfig selects the deterministic rules. Explicit learnings are
// always passed on.
type ExtractConfig struct {
	// Errors enables ErrorResolution.
	Errors bool
	// Discoveries enables Discovery.
	Discoveries bool
	// Statements enables Statement.
	Statements bool
}

// Bounds on what an Extractor keeps per task, so a task that runs for days
// does not grow it.
const (
	maxPending  = 256 // tool calls waiting for their result
	maxFailures = 32  // open failures
	maxChanged  = 16  // changed files remembered per failure
	maxSeen     = 512 // discoveries and statements already emitted
	maxExplicit = 16  // record_learning details waiting for their Learning
	// A clipped summary or detail keeps max-1 bytes and words.Ellipsis, so
	// it is at most max characters long.
	maxSummary     = 200
	maxDetail      = 1000
	maxStatements  = 3 // per Text
	maxDiscoveries = 3 // files named by a discovery
)

// Extractor finds learnings in the observations of running tasks. It keeps
// a little state per task (calls waiting for results, failures not yet
// resolved, the current turn's digest) until Forget.
//
// An Extractor is not safe for concurrent use: the Syncer calls it from its
// one goroutine.
type Extractor struct {
	cfg   ExtractConfig
	tasks map[string]*taskState
}

// taskState is what an Extractor remembers about one task.
type taskState struct {
	// pending are the tool calls whose results have not arrived, by call
	// id. Cleared when a turn starts (a call cut short by an interruption
	// never gets a result).
	pending map[string]toolCall
	// failures are the last failed call of each (tool, target), by key.
	failures map[string]*failure
	// seq numbers failures, so the oldest is evicted first.
	seq int
	// seen holds the keys of discoveries and statements already emitted.
	seen map[string]bool
	// explicit maps a record_learning call's summary to its detail, until
	// the Learning event for it arrives.
	explicit map[string]string
	digest   digest
}

// toolCall is a ToolCall reduced to what the rules need.
type toolCall struct {
	name   string // as the engine called it
	family string // bash, read_file, write_file, edit_file, glob, grep or ""
	target string // canonical command, path or pattern
	args   map[string]any
	turn   int
}

// failure is the last failed call of one (tool, target).
type failure struct {
	call    toolCall
	text    string // preview and tail of its result
	changed []string
	seq     int
}

// NewExtractor returns an Extractor applying the rules cfg enables.
func NewExtractor(cfg ExtractConfig) *Extractor {
	return &Extractor{cfg: cfg, tasks: map[string]*taskState{}}
}

// Forget drops the state of task id (finished, or no longer watched).
func (x *Extractor) Forget(id string) { delete(x.tasks, id) }

func (x *Extractor) state(id string) *taskState {
	st := x.tasks[id]
	if st == nil {
		st = &taskState{
			pending:  map[string]toolCall{},
			failures: map[string]*failure{},
			seen:     map[string]bool{},
			explicit: map[string]string{},
		}
		x.tasks[id] = st
	}
	return st
}

// Observe reads one observation of task id and returns the learnings it
// completes, if any. Payloads are the values the event bus delivers; kinds
// it has no use for are ignored.
func (x *Extractor) Observe(id string, p event.Payload) []Candidate {
	switch p := p.(type) {
	case event.TurnStarted:
		st := x.state(id)
		clear(st.pending)
		st.digest.reset(p.Turn)
	case event.Text:
		st := x.state(id)
		st.digest.text(p)
		if x.cfg.Statements {
			return st.statements(p)
		}
	case event.ToolCall:
		st := x.state(id)
		c := parseCall(p)
		st.digest.call(p, c)
		if len(st.pending) >= maxPending {
			clear(st.pending)
		}
		st.pending[p.CallID] = c
		if c.family == "record_learning" {
			st.stashExplicit(c)
		}
	case event.ToolResult:
		st := x.state(id)
		st.digest.result(p)
		c, ok := st.pending[p.CallID]
		if !ok {
			return nil
		}
		delete(st.pending, p.CallID)
		var out []Candidate
		if x.cfg.Errors {
			out = append(out, st.resolve(c, p)...)
		}
		if x.cfg.Discoveries && !p.Error {
			out = append(out, st.discover(c, p)...)
		}
		return out
	case event.FileChanged:
		st := x.state(id)
		st.digest.changed(p)
		st.noteChange(p.Path)
	case event.Learning:
		st := x.state(id)
		st.digest.learning(p)
		return []Candidate{st.explicitLearning(p)}
	}
	return nil
}

// Families of tools, by lowercase name: the native agent's and the usual
// names of external CLIs.
var families = map[string]string{
	"bash": "bash", "shell": "bash", "run_shell_command": "bash",
	"exec_command": "bash", "shell_command": "bash", "local_shell": "bash",
	"read_file": "read_file", "read": "read_file",
	"write_file": "write_file", "write": "write_file",
	"edit_file": "edit_file", "edit": "edit_file", "multiedit": "edit_file", "replace": "edit_file",
	"glob": "glob",
	"grep": "grep", "search_file_content": "grep",
	"record_learning": "record_learning",
}

// parseCall reads a tool call's family and target.
func parseCall(p event.ToolCall) toolCall {
	c := toolCall{name: p.Name, family: families[strings.ToLower(p.Name)], turn: p.Turn}
	_ = json.Unmarshal(p.Args, &c.args) // a call without object args has no target
	switch c.family {
	case "bash":
		c.target = canonicalCommand(commandArg(c.args))
	case "read_file", "write_file", "edit_file":
		if f := str(c.args, "path", "file_path", "absolute_path", "filename"); f != "" {
			c.target = path.Clean(strings.TrimPrefix(f, "./"))
		}
	case "glob", "grep":
		c.target = str(c.args, "pattern")
	}
	return c
}

// str returns the first of keys that is a non-empty string in args.
func str(args map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := args[k].(string); ok && strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// commandArg is a shell tool's command: a string, or an argv array (codex),
// whose "bash -lc <script>" form yields the script.
func commandArg(args map[string]any) string {
	if s := str(args, "command", "cmd"); s != "" {
		return s
	}
	raw, _ := args["command"].([]any)
	var argv []string
	for _, a := range raw {
		if s, ok := a.(string); ok {
			argv = append(argv, s)
		}
	}
	if n := len(argv); n >= 3 && (argv[n-2] == "-c" || argv[n-2] == "-lc") {
		return argv[n-1]
	}
	return strings.Join(argv, " ")
}

// canonicalCommand makes equal commands equal strings: quotes dropped,
// spaces collapsed, a leading "./" of the first word removed.
func canonicalCommand(cmd string) string {
	cmd = strings.Map(func(r rune) rune {
		if r == '"' || r == '\'' || r == '`' {
			return -1
		}
		return r
	}, cmd)
	return strings.TrimPrefix(words.OneLine(cmd), "./")
}

// display is how a summary names a call: the command for a shell, else
// the tool and its target.
func (c toolCall) display() string {
	if c.family == "bash" {
		return words.Clip(c.target, 69)
	}
	return words.Clip(c.family+" "+c.target, 69)
}

// stashExplicit keeps a record_learning call's detail for the Learning
// event that follows it.
func (st *taskState) stashExplicit(c toolCall) {
	s := strings.TrimSpace(str(c.args, "summary"))
	d := strings.TrimSpace(str(c.args, "detail"))
	if s == "" || d == "" {
		return
	}
	if len(st.explicit) >= maxExplicit {
		clear(st.explicit)
	}
	st.explicit[s] = d
}

// explicitLearning passes a recorded learning on as a Candidate.
func (st *taskState) explicitLearning(p event.Learning) Candidate {
	s := strings.TrimSpace(p.Summary)
	d := st.explicit[s]
	delete(st.explicit, s)
	return Candidate{
		Kind:    Explicit,
		Summary: s,
		Detail:  words.Clip(d, maxDetail-1),
		Tags:    append([]string(nil), p.Tags...),
		Files:   pathTokens(s),
		Turn:    p.Turn,
	}
}

// remember marks key as emitted and reports whether it was new.
func (st *taskState) remember(key string) bool {
	if st.seen[key] {
		return false
	}
	if len(st.seen) >= maxSeen {
		clear(st.seen)
	}
	st.seen[key] = true
	return true
}
