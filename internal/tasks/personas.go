package tasks

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Models gives the client and model name of a tier; an error says why
// there is none (no provider configured).
type Models func(t llm.Tier) (llm.Client, string, error)

// Personas chooses and changes a task's persona for the executor (it
// implements executor.Personas) with the persona set, the router tier's
// model and the user's hooks.
type Personas struct {
	set    *persona.Set
	hooks  *hooks.Runner
	models Models
}

// NewPersonas returns the persona choice over set; models gives a tier's
// model, hooks are the user's (PersonaSelected, PersonaPromptAssembly,
// PersonaEscalated).
func NewPersonas(set *persona.Set, hooks *hooks.Runner, models Models) *Personas {
	return &Personas{set: set, hooks: hooks, models: models}
}

var _ executor.Personas = (*Personas)(nil)

// Models returns the tier to model mapping the personas use.
func (s *Personas) Models() Models { return s.models }

// selectedDecision is what PersonaSelected hooks see; they may change
// persona and tags.
type selectedDecision struct {
	Description string   `json:"description"`
	Persona     string   `json:"persona"`
	Method      string   `json:"method"`
	Reason      string   `json:"reason"`
	Category    string   `json:"category"`
	Complexity  string   `json:"complexity"`
	Tags        []string `json:"tags"`
}

// Select implements executor.Personas.
func (s *Personas) Select(ctx context.Context, t task.Task) executor.Selection {
	start := time.Now()
	var sel executor.Selection
	ev := &sel.Event
	fallback := func(why string) {
		ev.Persona, ev.Method, ev.Reason = s.set.Defaults.DefaultPersona, "fallback", why
	}
	switch routable, why := s.set.Routable(); {
	case t.Persona != "":
		if _, err := s.set.Assignable(t.Persona); err != nil {
			fallback(err.Error())
		} else {
			ev.Persona, ev.Method, ev.Reason = t.Persona, "explicit", "named when the task was created"
		}
	case !routable:
		fallback(why)
	default:
		router, _ := s.set.Get("router") // Routable: present and enabled
		client, model, err := s.models(router.Tier)
		if err != nil {
			fallback("no model for the router tier: " + err.Error())
			break
		}
		route, resp, err := s.set.Classify(ctx, client, model, t)
		if resp != nil {
			sel.Call = &engine.Call{Provider: resp.Provider, Model: resp.Model, Usage: resp.Usage, CostUSD: resp.CostUSD, Duration: time.Since(start)}
		}
		if err != nil {
			fallback(err.Error())
			break
		}
		ev.Category, ev.Complexity, ev.Suggested = route.Category, route.Complexity, route.Suggested
		name, reason, ok := s.set.Match(route)
		if !ok {
			fallback(reason)
			break
		}
		ev.Persona, ev.Method, ev.Reason = name, "router", reason
		sel.Tags = route.Tags
	}
	if s.hooks.Has(hooks.PersonaSelected) {
		d := selectedDecision{Description: t.Description, Persona: ev.Persona, Method: ev.Method, Reason: ev.Reason,
			Category: ev.Category, Complexity: ev.Complexity, Tags: sel.Tags}
		v := s.hooks.Decide(ctx, hooks.PersonaSelected, t.ID, &d, func() error {
			_, err := s.set.Assignable(d.Persona)
			return err
		})
		if v.Modified {
			if d.Persona != ev.Persona {
				ev.Persona, ev.Method, ev.Reason = d.Persona, "hook", cmp.Or(v.Reason, "changed by a PersonaSelected hook")
			}
			sel.Tags = d.Tags
		}
	}
	sel.Tags = validTags(sel.Tags)
	ev.Tags = sel.Tags
	t.Persona = ev.Persona
	ev.Model = s.Model(t)
	ev.DurationMs = time.Since(start).Milliseconds()
	return sel
}

// validTags keeps the tags a task accepts.
func validTags(in []string) []string {
	var out []string
	for _, tg := range in {
		if n, err := task.NormalizeTags([]string{tg}); err == nil && len(n) == 1 {
			out = append(out, n[0])
		}
	}
	return out
}

// Target implements executor.Personas.
func (s *Personas) Target(current, to, by string) (string, error) {
	if by != "user" && !s.set.Defaults.AllowEscalation {
		return "", &persona.EscalationError{Msg: "escalation by supervisors is off (task-defaults.allow-escalation: false)"}
	}
	if current == "" {
		current = s.set.Defaults.DefaultPersona
	}
	return s.set.EscalationTarget(current, to)
}

// Model implements executor.Personas.
func (s *Personas) Model(t task.Task) string {
	if t.Model != "" {
		return t.Model
	}
	_, name, err := s.models(s.set.Effective(t.Persona).Tier)
	if err != nil {
		return ""
	}
	return name
}

// Describe implements executor.Personas.
func (s *Personas) Describe(key string) string {
	p := s.set.Effective(key)
	return fmt.Sprintf("You now work as the %s persona (%s), on the %s model tier: your system prompt and model changed. "+
		"Your conversation and worktree are as they were; carry on with the task.", p.Name, p.Description, p.Tier)
}

// Escalated implements executor.Personas.
func (s *Personas) Escalated(t task.Task, e event.PersonaEscalated) {
	s.hooks.Notify(hooks.PersonaEscalated, t.ID, struct {
		event.PersonaEscalated
		Description string `json:"description"`
	}{e, t.Description})
}

// promptDecision is what PersonaPromptAssembly hooks see; they may change
// the prompt.
type promptDecision struct {
	Persona string `json:"persona"`
	Prompt  string `json:"prompt"`
}

// System returns a task's whole system prompt: its persona's part (after
// the PersonaPromptAssembly hooks) before base.
func (s *Personas) System(t task.Task, base string) string {
	p := s.set.Effective(t.Persona)
	d := promptDecision{Persona: p.Key, Prompt: p.SystemPrompt}
	if s.hooks.Has(hooks.PersonaPromptAssembly) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		s.hooks.Decide(ctx, hooks.PersonaPromptAssembly, t.ID, &d, nil)
		cancel()
	}
	return persona.SystemPrompt(d.Prompt, base)
}

// Tier returns the model tier a task runs on.
func (s *Personas) Tier(t task.Task) llm.Tier {
	return s.set.Effective(t.Persona).Tier
}
