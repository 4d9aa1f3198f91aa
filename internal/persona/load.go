package persona

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// fileShape is personas.yaml as written. Pointer fields tell a field the
// user set from one left to the built-in value.
type fileShape struct {
	Personas     map[string]*personaYAML `yaml:"personas"`
	TaskDefaults defaultsYAML            `yaml:"task-defaults"`
	Workflows    map[string][]Phase      `yaml:"workflows"`
	Watchers     map[string]*watcherYAML `yaml:"watchers"`
}

type personaYAML struct {
	Name         *string        `yaml:"name"`
	Description  *string        `yaml:"description"`
	ModelTier    *string        `yaml:"model-tier"`
	SystemPrompt *string        `yaml:"system-prompt"`
	AutoAssign   *[]string      `yaml:"auto-assign"`
	Internal     *bool          `yaml:"internal"`
	Enabled      *bool          `yaml:"enabled"`
	RunInterval  *time.Duration `yaml:"run-interval"`
}

type defaultsYAML struct {
	DefaultPersona  *string        `yaml:"default-persona"`
	AllowEscalation *bool          `yaml:"allow-escalation"`
	EscalationChain *[]string      `yaml:"escalation-chain"`
	AutoRoute       *bool          `yaml:"auto-route"`
	RouterTimeout   *time.Duration `yaml:"router-timeout"`
}

// builtInFile names the embedded definitions in errors (which would be ours).
const builtInFile = "(built-in personas)"

// Defaults returns the built-in set alone.
func Defaults() *Set {
	s, err := build(builtInFile, nil)
	if err != nil {
		panic("persona: the built-in definitions are invalid: " + err.Error())
	}
	return s
}

// Load reads the user's personas.yaml at path and merges it over the
// built-in personas. A missing file yields the built-in set. Every error is
// a *config.Error naming the file, the line and the key (personas.NAME.FIELD,
// task-defaults.FIELD, workflows.NAME.I.FIELD).
func Load(path string) (*Set, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Defaults(), nil
	}
	if err != nil {
		var pe *fs.PathError
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, &config.Error{File: path, Msg: "reading personas file: " + msg, Err: err}
	}
	return Parse(path, data)
}

// Parse is Load for the contents of file.
func Parse(file string, data []byte) (*Set, error) {
	return build(file, data)
}

// build decodes the built-in definitions, then the user's data over them.
func build(file string, data []byte) (*Set, error) {
	var base fileShape
	if err := config.DecodeYAML(builtInFile, builtinYAML, &base, nil); err != nil {
		return nil, err
	}
	var user fileShape
	var s *Set
	validate := func() error {
		var err error
		s, err = merge(base, user)
		if err != nil {
			return err
		}
		return s.validate(user)
	}
	if err := config.DecodeYAML(file, data, &user, validate); err != nil {
		return nil, err
	}
	if data != nil {
		s.File = file
	}
	return s, nil
}

// fieldErr is a validation error at a dotted key of the file.
func fieldErr(key, format string, args ...any) *config.Error {
	return &config.Error{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// merge lays user over base.
func merge(base, user fileShape) (*Set, error) {
	s := &Set{personas: map[string]Persona{}, workflows: map[string]Workflow{}, raw: map[string][]Phase{}}
	for _, k := range builtInOrder() {
		p, ok := base.Personas[k]
		if !ok {
			continue
		}
		per, err := apply(Persona{Key: k, Enabled: true, Origin: BuiltIn}, p, "personas."+k, false)
		if err != nil {
			return nil, err
		}
		per.Overridden = nil
		s.personas[k] = per
		s.order = append(s.order, k)
	}
	var custom []string
	for k := range user.Personas {
		if _, ok := s.personas[k]; !ok {
			custom = append(custom, k)
		}
	}
	slices.Sort(custom)
	for _, k := range custom {
		if !keyPattern().MatchString(k) {
			return nil, fieldErr("personas."+k, "%q is not a valid persona name; use lower-case letters, digits and '-', at most 64", k)
		}
		s.order = append(s.order, k)
		s.personas[k] = Persona{Key: k, Enabled: true, Origin: Custom}
	}
	for _, k := range s.order {
		up := user.Personas[k]
		if up == nil {
			continue
		}
		per, err := apply(s.personas[k], up, "personas."+k, true)
		if err != nil {
			return nil, err
		}
		if per.Origin == BuiltIn && len(per.Overridden) > 0 {
			per.Origin = Overridden
		}
		s.personas[k] = per
	}
	d := TaskDefaults{}
	applyDefaults(&d, base.TaskDefaults)
	applyDefaults(&d, user.TaskDefaults)
	s.Defaults = d
	if err := mergeWatchers(s, base.Watchers, user.Watchers); err != nil {
		return nil, err
	}
	for name, phases := range base.Workflows {
		s.workflows[name] = Workflow{Name: name, Origin: BuiltIn}
		s.raw[name] = phases
	}
	for name, phases := range user.Workflows {
		o := Custom
		if _, ok := s.workflows[name]; ok {
			o = Overridden
		}
		s.workflows[name] = Workflow{Name: name, Origin: o}
		s.raw[name] = phases
	}
	return s, nil
}

// builtInOrder is the order of the built-in personas in listings.
func builtInOrder() []string {
	return []string{"senior", "mid", "junior", "reviewer", "architect", "router", "watcher", "syncer"}
}

// apply sets the fields y sets on p.
func apply(p Persona, y *personaYAML, key string, record bool) (Persona, error) {
	set := func(field string) {
		if record {
			p.Overridden = append(p.Overridden, field)
		}
	}
	if y.Name != nil {
		p.Name = strings.TrimSpace(*y.Name)
		set("name")
	}
	if y.Description != nil {
		p.Description = strings.TrimSpace(*y.Description)
		set("description")
	}
	if y.ModelTier != nil {
		t, ok := parseTier(strings.TrimSpace(*y.ModelTier))
		if !ok {
			names := make([]string, 0, 3)
			for _, t := range llm.Tiers() {
				names = append(names, string(t))
			}
			return p, fieldErr(key+".model-tier", "%q is not a model tier; want one of %s", *y.ModelTier, strings.Join(names, ", "))
		}
		p.Tier = t
		set("model-tier")
	}
	if y.SystemPrompt != nil {
		p.SystemPrompt = strings.TrimSpace(*y.SystemPrompt)
		set("system-prompt")
	}
	if y.AutoAssign != nil {
		p.AutoAssign = nil
		for i, c := range *y.AutoAssign {
			c = strings.ToLower(strings.TrimSpace(c))
			if !keyPattern().MatchString(c) {
				return p, fieldErr(key+".auto-assign."+strconv.Itoa(i), "%q is not a valid category; use lower-case letters, digits and '-'", c)
			}
			if !slices.Contains(p.AutoAssign, c) {
				p.AutoAssign = append(p.AutoAssign, c)
			}
		}
		set("auto-assign")
	}
	if y.Internal != nil {
		p.Internal = *y.Internal
		set("internal")
	}
	if y.Enabled != nil {
		p.Enabled = *y.Enabled
		set("enabled")
	}
	if y.RunInterval != nil {
		if *y.RunInterval < time.Second || *y.RunInterval > 24*time.Hour {
			return p, fieldErr(key+".run-interval", "is %s; want 1s to 24h", *y.RunInterval)
		}
		p.RunInterval = *y.RunInterval
		set("run-interval")
	}
	return p, nil
}

func applyDefaults(d *TaskDefaults, y defaultsYAML) {
	if y.DefaultPersona != nil {
		d.DefaultPersona = strings.TrimSpace(*y.DefaultPersona)
	}
	if y.AllowEscalation != nil {
		d.AllowEscalation = *y.AllowEscalation
	}
	if y.EscalationChain != nil {
		d.EscalationChain = nil
		for _, c := range *y.EscalationChain {
			d.EscalationChain = append(d.EscalationChain, strings.TrimSpace(c))
		}
	}
	if y.AutoRoute != nil {
		d.AutoRoute = *y.AutoRoute
	}
	if y.RouterTimeout != nil {
		d.RouterTimeout = *y.RouterTimeout
	}
}

// validate checks the merged set. Errors point at the user's keys where the
// problem is theirs: a chain the user wrote is reported at its entry; a
// built-in chain naming a persona the user disabled, at that persona's
// enabled line.
func (s *Set) validate(user fileShape) error {
	for _, k := range s.order {
		p := s.personas[k]
		key := "personas." + k
		if p.Name == "" {
			p.Name = strings.ToUpper(k[:1]) + k[1:]
			s.personas[k] = p
		}
		if !p.Enabled {
			continue
		}
		switch {
		case p.Tier == "":
			return fieldErr(key+".model-tier", "is missing; a persona needs a model tier (router, worker or expert)")
		case p.SystemPrompt == "":
			return fieldErr(key+".system-prompt", "is empty; a persona needs a system prompt")
		case len(p.SystemPrompt) > 32<<10:
			return fieldErr(key+".system-prompt", "is %d bytes; at most 32768", len(p.SystemPrompt))
		case p.Description == "":
			return fieldErr(key+".description", "is empty; say in a line what the persona is for (persona list shows it)")
		}
	}
	d := s.Defaults
	userChain := user.TaskDefaults.EscalationChain != nil
	dp, ok := s.personas[d.DefaultPersona]
	switch {
	case !ok:
		return fieldErr("task-defaults.default-persona", "%q is not a persona; want one of %s", d.DefaultPersona, strings.Join(s.assignable(), ", "))
	case !dp.Assignable():
		if user.TaskDefaults.DefaultPersona == nil {
			field, what := "enabled", "disabling it"
			if dp.Enabled {
				field, what = "internal", "making it internal"
			}
			return fieldErr("personas."+d.DefaultPersona+"."+field, "%s is the default persona (task-defaults.default-persona); set another default before %s", d.DefaultPersona, what)
		}
		return fieldErr("task-defaults.default-persona", "%q is disabled or internal; want one of %s", d.DefaultPersona, strings.Join(s.assignable(), ", "))
	}
	seen := map[string]bool{}
	for i, k := range d.EscalationChain {
		key := "task-defaults.escalation-chain." + strconv.Itoa(i)
		p, ok := s.personas[k]
		switch {
		case !ok:
			return fieldErr(key, "%q is not a persona; want one of %s", k, strings.Join(s.assignable(), ", "))
		case seen[k]:
			return fieldErr(key, "%q is in the chain twice", k)
		case !p.Enabled:
			if !userChain {
				return fieldErr("personas."+k+".enabled", "%s is disabled but the escalation chain (task-defaults.escalation-chain: %s) names it; set a chain without it", k, strings.Join(d.EscalationChain, ", "))
			}
			return fieldErr(key, "%q is disabled (enabled: false); remove it from the chain or enable it", k)
		case p.Internal:
			if !userChain {
				return fieldErr("personas."+k+".internal", "%s is made internal but the escalation chain (task-defaults.escalation-chain: %s) names it; set a chain without it", k, strings.Join(d.EscalationChain, ", "))
			}
			return fieldErr(key, "%q is internal; the chain names personas tasks can be given", k)
		}
		seen[k] = true
	}
	if d.RouterTimeout < time.Second || d.RouterTimeout > 10*time.Minute {
		return fieldErr("task-defaults.router-timeout", "is %s; want 1s to 10m", d.RouterTimeout)
	}
	for _, name := range sortedKeys(s.workflows) {
		w := s.workflows[name]
		if !keyPattern().MatchString(name) {
			return fieldErr("workflows."+name, "%q is not a valid workflow name; use lower-case letters, digits and '-'", name)
		}
		if w.Origin == BuiltIn && !s.usable(s.raw[name]) {
			// A built-in workflow naming a persona the user disabled (or
			// made internal) is dropped, not an error they must fix.
			delete(s.workflows, name)
			continue
		}
		norm, err := s.checkWorkflow(s.raw[name], "workflows."+name)
		if err != nil {
			return err
		}
		w.Phases = norm
		s.workflows[name] = w
	}
	s.raw = nil
	return nil
}

// usable reports whether every persona phases name may be given to a task.
func (s *Set) usable(phases []Phase) bool {
	for _, p := range phases {
		for _, m := range append([]string{p.Persona}, p.Personas...) {
			if m == "" {
				continue
			}
			if _, err := s.Assignable(strings.TrimSpace(m)); err != nil {
				return false
			}
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
