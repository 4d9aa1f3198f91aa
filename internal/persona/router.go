package persona

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Route is the router persona's classification of a task.
type Route struct {
	Category   string   `json:"category"`
	Complexity string   `json:"complexity,omitempty"`
	Suggested  string   `json:"suggested-persona"`
	Tags       []string `json:"tags,omitempty"`
}

// Limits of a router reply.
const (
	maxReply     = 16 << 10
	maxRouteTags = 8
	maxWord      = 64
)

// ParseRoute reads the router's reply: one JSON object, alone or in a
// ```json code fence, with the fields of Route ("suggested_persona" and
// "persona" are accepted for "suggested-persona"). Anything else is an
// error saying what was wrong; a reply is never trusted further than that.
// Complexity must be low, medium or high when present; category and
// persona are single words; tags that are not usable are dropped.
func ParseRoute(reply string) (Route, error) {
	if len(reply) > maxReply {
		return Route{}, fmt.Errorf("the reply is %d bytes; a classification is under %d", len(reply), maxReply)
	}
	var raw struct {
		Category   any `json:"category"`
		Complexity any `json:"complexity"`
		Suggested  any `json:"suggested-persona"`
		Suggested2 any `json:"suggested_persona"`
		Suggested3 any `json:"persona"`
		Tags       any `json:"tags"`
	}
	if err := llm.DecodeObject(reply, &raw); err != nil {
		return Route{}, err
	}
	var r Route
	var err error
	if r.Category, err = word(raw.Category, "category"); err != nil {
		return Route{}, err
	}
	for _, s := range []any{raw.Suggested, raw.Suggested2, raw.Suggested3} {
		if r.Suggested != "" || s == nil {
			continue
		}
		if r.Suggested, err = word(s, "suggested-persona"); err != nil {
			return Route{}, err
		}
	}
	if r.Category == "" && r.Suggested == "" {
		return Route{}, errors.New("the reply names neither a category nor a persona")
	}
	c, err := word(raw.Complexity, "complexity")
	if err != nil {
		return Route{}, err
	}
	if c != "" && !slices.Contains([]string{"low", "medium", "high"}, c) {
		return Route{}, fmt.Errorf("complexity %q is not low, medium or high", words.Clip(c, 20))
	}
	r.Complexity = c
	if raw.Tags != nil {
		list, ok := raw.Tags.([]any)
		if !ok {
			return Route{}, errors.New("tags is not a list")
		}
		for _, t := range list {
			s, ok := t.(string)
			if !ok {
				continue
			}
			s = strings.ToLower(strings.TrimSpace(s))
			if s == "" || len(s) > task.MaxTagLen || !printableWord(s) || slices.Contains(r.Tags, s) {
				continue
			}
			r.Tags = append(r.Tags, s)
			if len(r.Tags) == maxRouteTags {
				break
			}
		}
	}
	return r, nil
}

// word reads an optional single-word string field, lower-cased.
func word(v any, field string) (string, error) {
	if v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s is not a string", field)
	}
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) > maxWord || !printableWord(s) {
		return "", fmt.Errorf("%s %q is not a short name", field, words.Clip(s, 40))
	}
	return s, nil
}

func printableWord(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) || strings.ContainsRune(`,"<>`+"`", r) {
			return false
		}
	}
	return true
}

// Match picks the persona a route names: the suggested persona when a task
// may be given it; else the first persona (in listing order) whose
// auto-assign categories hold the category, or hold the suggestion used as
// a category. ok is false, with the reason, when nothing matches.
func (s *Set) Match(r Route) (persona, reason string, ok bool) {
	if r.Suggested != "" {
		if p, err := s.Assignable(r.Suggested); err == nil {
			why := "the router suggested " + p.Key
			if r.Category != "" && slices.Contains(p.AutoAssign, r.Category) {
				why += " for " + r.Category
			}
			return p.Key, why, true
		}
	}
	for _, c := range []string{r.Category, r.Suggested} {
		if c == "" {
			continue
		}
		for _, k := range s.assignable() {
			if slices.Contains(s.personas[k].AutoAssign, c) {
				return k, fmt.Sprintf("category %s is assigned to %s", c, k), true
			}
		}
	}
	return "", fmt.Sprintf("the router suggested %q for category %q, which no assignable persona takes", r.Suggested, r.Category), false
}

// RouterRequest is the model request that classifies t: the router
// persona's prompt, and the task with the personas to choose from.
func (s *Set) RouterRequest(t task.Task, model string) *llm.Request {
	router := s.personas["router"]
	var b bytes.Buffer
	fmt.Fprintf(&b, "Task:\n%s\n", t.Description)
	if strings.TrimSpace(t.Context) != "" {
		fmt.Fprintf(&b, "\nContext:\n%s\n", words.Clip(t.Context, 4000))
	}
	if len(t.Tags) > 0 {
		fmt.Fprintf(&b, "\nTags: %s\n", strings.Join(t.Tags, ", "))
	}
	b.WriteString("\nPersonas (name: description; categories):\n")
	for _, k := range s.assignable() {
		p := s.personas[k]
		fmt.Fprintf(&b, "- %s: %s; %s\n", k, p.Description, strings.Join(p.AutoAssign, ", "))
	}
	zero := 0.0
	return &llm.Request{Model: model, System: router.SystemPrompt, Messages: []llm.Message{llm.UserText(b.String())},
		MaxTokens: 300, Temperature: &zero}
}

// Routable reports whether tasks that name no persona are classified by
// the router (auto-route on, router enabled); when not, why.
func (s *Set) Routable() (bool, string) {
	switch {
	case !s.Defaults.AutoRoute:
		return false, "auto-routing is off (task-defaults.auto-route)"
	case !s.personas["router"].Enabled:
		return false, "the router persona is disabled"
	}
	return true, ""
}

// Classify asks the router (client, model) about t, within the router
// timeout, and parses its reply. The response is returned with any error
// after the call, so that its cost is charged.
func (s *Set) Classify(ctx context.Context, client llm.Client, model string, t task.Task) (Route, *llm.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Defaults.RouterTimeout)
	defer cancel()
	resp, err := client.Complete(ctx, s.RouterRequest(t, model))
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Route{}, nil, fmt.Errorf("the router did not answer within %s", s.Defaults.RouterTimeout)
		}
		return Route{}, nil, fmt.Errorf("the router's model call failed: %w", err)
	}
	r, err := ParseRoute(resp.Message.Text())
	return r, resp, err
}

// SystemPrompt assembles a task's system prompt: the persona's prompt (its
// part, after any PersonaPromptAssembly hook) before the base prompt that
// tells every agent how to work with Neuraphage's tools.
func SystemPrompt(personaPart, base string) string {
	personaPart = strings.TrimSpace(personaPart)
	if personaPart == "" {
		return base
	}
	return personaPart + "\n\n" + base
}
