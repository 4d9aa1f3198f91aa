package lifecycle

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// Progress is a run's progress state (seed 003's ProgressState), derived
// from the observations its engine emits: the same for every engine. Its
// methods are safe for concurrent use.
type Progress struct {
	mu      sync.Mutex
	started time.Time
	last    time.Time
	turn    int
	read    map[string]bool
	written map[string]bool
	commits int
	lines   int
	errors  []string
	denials []event.PermissionDenied
	// commitCalls are the shell calls running git commit, by call id,
	// until their result says whether a commit was made.
	commitCalls map[string]bool
	// inFlight are the tool calls without a result yet.
	inFlight map[string]bool
}

// NewProgress starts tracking a run that began at start.
func NewProgress(start time.Time) *Progress {
	return &Progress{started: start, last: start, read: map[string]bool{}, written: map[string]bool{}, commitCalls: map[string]bool{}, inFlight: map[string]bool{}}
}

// maxErrors bounds the errors kept (the latest ones).
const maxErrors = 32

// Observe takes one observation made at now.
func (p *Progress) Observe(pl event.Payload, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.After(p.last) {
		p.last = now
	}
	switch o := pl.(type) {
	case event.TurnStarted:
		p.turn = max(p.turn, o.Turn)
		clear(p.inFlight)
	case event.TurnEnded, event.Interrupted:
		clear(p.inFlight) // calls cut short leave no result
	case event.Text:
		p.lines += strings.Count(strings.TrimRight(o.Text, "\n"), "\n") + 1
	case event.ToolCall:
		p.inFlight[o.CallID] = true
		args := toolArgs(o.Args)
		if isRead(o.Name) && args.path() != "" {
			p.read[args.path()] = true
		}
		if isShell(o.Name) && strings.Contains(args.Command, "git commit") {
			p.commitCalls[o.CallID] = true
		}
	case event.ToolResult:
		delete(p.inFlight, o.CallID)
		p.lines++
		if o.Error {
			p.addError(fmt.Sprintf("%s failed", o.Name))
		} else if p.commitCalls[o.CallID] {
			p.commits++
		}
		delete(p.commitCalls, o.CallID)
	case event.FileChanged:
		p.written[o.Path] = true
	case event.CommitMade:
		p.commits++
	case event.ModelError:
		p.addError("model error: " + o.Message)
	case event.Failed:
		p.addError(o.Reason)
	case event.PermissionDenied:
		p.denials = append(p.denials, o)
		p.addError("permission denied: " + denied(o))
	}
}

func (p *Progress) addError(s string) {
	p.errors = append(p.errors, s)
	if len(p.errors) > maxErrors {
		p.errors = slices.Delete(p.errors, 0, len(p.errors)-maxErrors)
	}
}

// ToolRunning reports whether a tool call is in flight: called, with no
// result yet.
func (p *Progress) ToolRunning() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.inFlight) > 0
}

// LastActivity is when the run last reported anything.
func (p *Progress) LastActivity() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// State is a copy of a Progress.
type State struct {
	Started, LastActivity   time.Time
	Turn                    int
	FilesRead, FilesWritten []string
	Commits, OutputLines    int
	Errors                  []string
	PermissionErrors        []event.PermissionDenied
}

// State returns the progress so far.
func (p *Progress) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return State{Started: p.started, LastActivity: p.last, Turn: p.turn,
		FilesRead: sortedKeys(p.read), FilesWritten: sortedKeys(p.written),
		Commits: p.commits, OutputLines: p.lines,
		Errors: slices.Clone(p.errors), PermissionErrors: slices.Clone(p.denials)}
}

// Snapshot is the progress as an event at now.
func (p *Progress) Snapshot(now time.Time) event.Progress {
	s := p.State()
	return event.Progress{Turn: s.Turn, FilesRead: len(s.FilesRead), FilesWritten: len(s.FilesWritten),
		Commits: s.Commits, OutputLines: s.OutputLines, Errors: len(s.Errors), Denials: len(s.PermissionErrors),
		ElapsedMs: now.Sub(s.Started).Milliseconds(), IdleMs: now.Sub(s.LastActivity).Milliseconds()}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// args are the fields of a tool call's input that progress reads, in the
// spellings of the engines (the native tools, Claude Code, Codex, Gemini).
type args struct {
	Path     string `json:"path"`
	FilePath string `json:"file_path"`
	Absolute string `json:"absolute_path"`
	Command  string `json:"command"`
}

func (a args) path() string {
	switch {
	case a.Path != "":
		return a.Path
	case a.FilePath != "":
		return a.FilePath
	}
	return a.Absolute
}

func toolArgs(raw json.RawMessage) args {
	var a args
	_ = json.Unmarshal(raw, &a) // other shapes read as nothing
	return a
}

func isRead(name string) bool {
	switch strings.ToLower(name) {
	case "read_file", "read", "view", "read_many_files", "notebookread":
		return true
	}
	return false
}

func isShell(name string) bool {
	switch strings.ToLower(name) {
	case "bash", "shell", "run_shell_command", "exec_command", "local_shell":
		return true
	}
	return false
}
