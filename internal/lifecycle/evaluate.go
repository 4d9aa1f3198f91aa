package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Evaluator makes tasks' manifests: the deterministic default, refined by
// the router tier when Client is set (sandbox.model_pass).
type Evaluator struct {
	Policy Policy
	// Client and Model are the router tier's; a nil Client keeps the
	// default.
	Client llm.Client
	Model  string
	// Timeout bounds the model's pass; zero means 20 s.
	Timeout time.Duration
}

// Evaluation is a manifest and what making it cost.
type Evaluation struct {
	Manifest task.Manifest
	// Call is the model's pass, to charge to the task; nil without one.
	Call *engine.Call
}

// Evaluate returns t's manifest: Default, then the model's pass over it
// when there is a client. A model that fails or answers anything but a
// well-formed manifest leaves the default, with the reason in its Note;
// what the model asks beyond the policy is dropped (Clamp), and said so.
func (e Evaluator) Evaluate(ctx context.Context, t task.Task, env []string) Evaluation {
	def := Default(t, e.Policy, env)
	if e.Client == nil {
		return Evaluation{Manifest: def}
	}
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	start := time.Now()
	resp, err := llm.Ask(ctx, e.Client, e.Model, evaluateSystem, Question(t, def), 1024, timeout)
	var call *engine.Call
	if resp != nil {
		call = &engine.Call{Provider: resp.Provider, Model: resp.Model, Usage: resp.Usage, CostUSD: resp.CostUSD, Duration: time.Since(start)}
	}
	if err != nil {
		def.Note = "the model's pass failed, the default is kept: " + words.OneLine(err.Error())
		return Evaluation{Manifest: def, Call: call}
	}
	m, err := ParseReply(resp.Message.Text(), def, e.Policy)
	if err != nil {
		def.Note = "the model's manifest was not used: " + words.OneLine(err.Error())
		return Evaluation{Manifest: def, Call: call}
	}
	return Evaluation{Manifest: m, Call: call}
}

const evaluateSystem = `You assess a coding task before an agent works on it, to give it the least it needs.
Reply with one JSON object and nothing else:
{"complexity": "low|medium|high", "tools": [...], "commands": [...], "readable": [...], "writable": [...], "secrets": [...]}
- tools: from the allowed tools only.
- commands: command prefixes the agent's shell needs (such as "go test", "npm run build"); [] for any.
- readable, writable: paths relative to the repository root ("." for all of it).
- secrets: names of environment variables holding secrets the task needs; never values.`

// Question is the router's question about t, with the default manifest
// it refines.
func Question(t task.Task, def task.Manifest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task: %s\n", t.Description)
	if t.Context != "" {
		fmt.Fprintf(&b, "Context: %s\n", words.Clip(t.Context, 4000))
	}
	if t.Persona != "" {
		fmt.Fprintf(&b, "Persona: %s\n", t.Persona)
	}
	fmt.Fprintf(&b, "Allowed tools: %s\n", strings.Join(def.Tools, ", "))
	d, _ := json.Marshal(modelManifest{Complexity: string(def.Complexity), Tools: def.Tools, Commands: def.Commands,
		Readable: def.Readable, Writable: def.Writable, Secrets: def.Secrets})
	fmt.Fprintf(&b, "Default manifest: %s\n", d)
	return b.String()
}

// modelManifest is the reply's shape.
type modelManifest struct {
	Complexity string   `json:"complexity"`
	Tools      []string `json:"tools"`
	Commands   []string `json:"commands"`
	Readable   []string `json:"readable"`
	Writable   []string `json:"writable"`
	Secrets    []string `json:"secrets"`
}

// maxReply bounds the reply ParseReply reads.
const maxReply = 64 << 10

// ParseReply reads the model's manifest from its reply (a JSON object,
// alone or in a code fence) over def: fields it leaves out keep def's.
// An unreadable reply, an unknown field, a wrong type or an unknown
// complexity is an error (the caller keeps def). What the reply asks
// beyond p is dropped and listed in the result's Note; the timeouts
// follow from its complexity, never from the model.
func ParseReply(reply string, def task.Manifest, p Policy) (task.Manifest, error) {
	if len(reply) > maxReply {
		return def, fmt.Errorf("the reply is %d bytes; at most %d", len(reply), maxReply)
	}
	i, j := strings.IndexByte(reply, '{'), strings.LastIndexByte(reply, '}')
	if i < 0 || j < i {
		return def, errors.New("the reply holds no JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(reply[i : j+1])))
	dec.DisallowUnknownFields()
	var mm modelManifest
	if err := dec.Decode(&mm); err != nil {
		return def, fmt.Errorf("reading the reply's manifest: %w", err)
	}
	m := def
	m.Source = "model"
	if mm.Complexity != "" {
		m.Complexity = task.Complexity(strings.ToLower(strings.TrimSpace(mm.Complexity)))
		if !m.Complexity.Valid() {
			return def, fmt.Errorf("complexity %q is none of low, medium, high", words.Clip(mm.Complexity, 40))
		}
	}
	set := func(dst *[]string, v []string) {
		if v != nil {
			*dst = v
		}
	}
	set(&m.Tools, mm.Tools)
	set(&m.Commands, mm.Commands)
	set(&m.Readable, mm.Readable)
	set(&m.Writable, mm.Writable)
	set(&m.Secrets, mm.Secrets)
	m.IdleTimeoutSecs, m.TotalTimeoutSecs = Timeouts(m.Complexity, p)
	m, dropped := Clamp(m, p)
	if len(dropped) > 0 {
		m.Note = "dropped beyond the policy: " + words.Clip(strings.Join(dropped, ", "), 300)
	}
	return m, nil
}
