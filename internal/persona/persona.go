// Package persona is what a task runs as: a system prompt, traits and a model
// tier. It holds the built-in personas (defaults.yaml, embedded), merges the
// user's personas.yaml over them (change any field, add personas, disable
// one), validates the result with the file, line and key of every problem,
// and answers the questions the daemon asks of personas: which persona a task
// may be given, which one the router's answer names, what comes next in the
// escalation chain, what a workflow's phases are, and what system prompt a
// task gets.
//
// The package performs no I/O beyond reading the file Load is given and the
// one model call Route makes with the client it is handed.
package persona

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// Persona is one effective persona: a built-in one with the user's changes,
// or one the user added.
type Persona struct {
	// Key is the persona's name as tasks, chains and --persona spell it.
	Key          string        `json:"key"`
	Name         string        `json:"name"`
	Description  string        `json:"description"`
	Tier         llm.Tier      `json:"model_tier"`
	SystemPrompt string        `json:"system_prompt"`
	AutoAssign   []string      `json:"auto_assign,omitempty"`
	Internal     bool          `json:"internal,omitempty"`
	Enabled      bool          `json:"enabled"`
	RunInterval  time.Duration `json:"run_interval,omitempty"`
	// Origin is built-in, overridden (built-in with fields the user set)
	// or custom (added by the user).
	Origin string `json:"origin"`
	// Overridden lists the fields the user's file set.
	Overridden []string `json:"overridden,omitempty"`
}

// Origins of a persona.
const (
	BuiltIn    = "built-in"
	Overridden = "overridden"
	Custom     = "custom"
)

// Assignable reports whether a task may be given the persona: enabled and
// not internal (router, watcher and syncer are internal).
func (p Persona) Assignable() bool { return p.Enabled && !p.Internal }

// TaskDefaults are the persona settings of new tasks.
type TaskDefaults struct {
	// DefaultPersona is used when the user names none and the router's
	// answer is unusable.
	DefaultPersona string `json:"default_persona"`
	// AllowEscalation lets supervisors (the Watcher) escalate tasks; the
	// user's own `task escalate` is always allowed.
	AllowEscalation bool `json:"allow_escalation"`
	// EscalationChain is the order escalation climbs, weakest first.
	EscalationChain []string `json:"escalation_chain"`
	// AutoRoute asks the router persona to pick a persona for tasks that
	// name none; off, they get DefaultPersona.
	AutoRoute bool `json:"auto_route"`
	// RouterTimeout bounds the router's model call.
	RouterTimeout time.Duration `json:"router_timeout"`
}

// Set is the effective set of personas, task defaults and named workflows.
// It is immutable once loaded and safe for concurrent use.
type Set struct {
	// File is the personas.yaml the set was loaded from ("" for the
	// built-in set alone, or when the file does not exist).
	File      string
	Defaults  TaskDefaults
	personas  map[string]Persona
	order     []string // built-in personas in their order, then custom ones by name
	workflows map[string]Workflow
	raw       map[string][]Phase // workflows as written, while loading
	watchers  map[string]WatcherRole
}

//go:embed defaults.yaml
var builtinYAML []byte

// DefaultsYAML returns the built-in definitions as YAML, the format of
// personas.yaml.
func DefaultsYAML() []byte { return slices.Clone(builtinYAML) }

// Get returns the persona called key, enabled or not.
func (s *Set) Get(key string) (Persona, bool) {
	p, ok := s.personas[key]
	return p, ok
}

// List returns every persona, built-in ones first in their order, then the
// user's by name.
func (s *Set) List() []Persona {
	out := make([]Persona, 0, len(s.order))
	for _, k := range s.order {
		out = append(out, s.personas[k])
	}
	return out
}

// assignable lists the keys of the personas a task may be given, in order.
func (s *Set) assignable() []string {
	var out []string
	for _, k := range s.order {
		if s.personas[k].Assignable() {
			out = append(out, k)
		}
	}
	return out
}

// UnknownError reports a persona name that cannot be used where it was
// given. It is a usage error: the CLI exits 2 with Valid as the hint.
type UnknownError struct {
	Name  string
	Why   string   // "no such persona", "disabled", "internal"
	Valid []string // the names that would be accepted
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("persona %q: %s; want one of %s", e.Name, e.Why, strings.Join(e.Valid, ", "))
}

// Assignable returns the persona called key if a task may be given it, or
// an *UnknownError.
func (s *Set) Assignable(key string) (Persona, error) {
	p, ok := s.personas[key]
	switch {
	case !ok:
		return Persona{}, &UnknownError{Name: key, Why: "no such persona", Valid: s.assignable()}
	case !p.Enabled:
		return Persona{}, &UnknownError{Name: key, Why: "disabled (enabled: false in personas.yaml)", Valid: s.assignable()}
	case p.Internal:
		return Persona{}, &UnknownError{Name: key, Why: "internal to Neuraphage, not assignable to tasks", Valid: s.assignable()}
	}
	return p, nil
}

// Effective returns the persona a task with persona key runs as: key when
// it is assignable, else the default persona (a task created before the
// user disabled its persona keeps running).
func (s *Set) Effective(key string) Persona {
	if p, err := s.Assignable(key); err == nil {
		return p
	}
	return s.personas[s.Defaults.DefaultPersona]
}

// EscalationError says why a task cannot be escalated.
type EscalationError struct{ Msg string }

func (e *EscalationError) Error() string { return e.Msg }

// Next returns the persona one step up the escalation chain from current.
func (s *Set) Next(current string) (string, error) {
	chain := s.Defaults.EscalationChain
	i := slices.Index(chain, current)
	switch {
	case len(chain) == 0:
		return "", &EscalationError{Msg: "the escalation chain is empty (task-defaults.escalation-chain); name a persona with --to"}
	case i < 0:
		return "", &EscalationError{Msg: fmt.Sprintf("%s is not in the escalation chain (%s); name a persona with --to", current, strings.Join(chain, " → "))}
	case i == len(chain)-1:
		return "", &EscalationError{Msg: fmt.Sprintf("%s is already the top of the escalation chain (%s)", current, strings.Join(chain, " → "))}
	}
	return chain[i+1], nil
}

// EscalationTarget returns the persona an escalation of a task running as
// current moves it to: to when given (it must be assignable and differ
// from current), else the next step of the chain.
func (s *Set) EscalationTarget(current, to string) (string, error) {
	if to == "" {
		return s.Next(current)
	}
	if _, err := s.Assignable(to); err != nil {
		return "", err
	}
	if to == current {
		return "", &EscalationError{Msg: fmt.Sprintf("the task already runs as %s", to)}
	}
	return to, nil
}

// Workflow returns the named workflow from the configuration.
func (s *Set) Workflow(name string) (Workflow, bool) {
	w, ok := s.workflows[name]
	return w, ok
}

// Workflows returns the named workflows sorted by name.
func (s *Set) Workflows() []Workflow {
	out := make([]Workflow, 0, len(s.workflows))
	for _, w := range s.workflows {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// keyPattern is what persona keys, categories and workflow names look like.
var keyPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`) })

// tiers maps the tier names personas.yaml accepts.
func parseTier(s string) (llm.Tier, bool) {
	for _, t := range llm.Tiers() {
		if string(t) == s {
			return t, true
		}
	}
	return "", false
}
