package persona

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Phase is one phase of a workflow as personas.yaml and workflow files
// write it (seed 004): one persona, or several with a mode.
type Phase struct {
	Phase    string   `yaml:"phase" json:"phase"`
	Persona  string   `yaml:"persona" json:"persona,omitempty"`
	Personas []string `yaml:"personas" json:"personas,omitempty"`
	// Mode is parallel (the default: all at once) or sequential (one
	// after another, each a phase of its own).
	Mode string `yaml:"mode" json:"mode,omitempty"`
	// Review marks a phase whose tasks end with findings for the next
	// phase; unset, a phase whose name starts with "review" is one.
	Review       *bool  `yaml:"review" json:"review,omitempty"`
	Instructions string `yaml:"instructions" json:"instructions,omitempty"`
}

// Workflow is a named workflow from personas.yaml.
type Workflow struct {
	Name   string       `json:"name"`
	Phases []task.Phase `json:"phases"`
	Origin string       `json:"origin"`
}

// checkWorkflow validates phases written at key and returns them as the
// task model holds them.
func (s *Set) checkWorkflow(phases []Phase, key string) ([]task.Phase, error) {
	if len(phases) == 0 {
		return nil, fieldErr(key, "has no phases")
	}
	var out []task.Phase
	for i, p := range phases {
		pk := key + "." + strconv.Itoa(i)
		name := strings.TrimSpace(p.Phase)
		if name == "" {
			return nil, fieldErr(pk+".phase", "is missing; every phase needs a name (design, implement, review, …)")
		}
		members := p.Personas
		switch {
		case p.Persona != "" && len(p.Personas) > 0:
			return nil, fieldErr(pk+".personas", "set persona or personas, not both")
		case p.Persona != "":
			members = []string{p.Persona}
		case len(members) == 0:
			return nil, fieldErr(pk+".persona", "is missing; name the persona (or personas) that run the phase")
		}
		if p.Mode != "sequential" && len(members) > task.MaxPersonasPerPhase {
			return nil, fieldErr(pk, "names %d personas; at most %d", len(members), task.MaxPersonasPerPhase)
		}
		members = append([]string(nil), members...)
		for j, m := range members {
			m = strings.TrimSpace(m)
			members[j] = m
			if _, err := s.Assignable(m); err != nil {
				field := pk + ".persona"
				if p.Persona == "" {
					field = pk + ".personas." + strconv.Itoa(j)
				}
				return nil, fieldErr(field, "%s", err.Error())
			}
		}
		review := strings.HasPrefix(strings.ToLower(name), "review")
		if p.Review != nil {
			review = *p.Review
		}
		base := task.Phase{Name: name, Review: review, Instructions: strings.TrimSpace(p.Instructions)}
		switch p.Mode {
		case "", "parallel":
			base.Personas = members
			out = append(out, base)
		case "sequential":
			for _, m := range members {
				ph := base
				ph.Personas = []string{m}
				out = append(out, ph)
			}
		default:
			return nil, fieldErr(pk+".mode", "%q is not a mode; want parallel or sequential", p.Mode)
		}
	}
	if len(out) > task.MaxPhases {
		return nil, fieldErr(key, "has %d phases; at most %d", len(out), task.MaxPhases)
	}
	return out, nil
}

// workflowFile is a workflow file for `task new --workflow FILE`: the
// phases, and optionally the task's description.
type workflowFile struct {
	Description string  `yaml:"description"`
	Workflow    []Phase `yaml:"workflow"`
}

// ParseWorkflow reads a workflow file (file names it in errors) and returns
// its phases checked against s, and the description it gives, if any.
// Errors are *config.Error with file, line and key (workflow.I.FIELD).
func (s *Set) ParseWorkflow(file string, data []byte) ([]task.Phase, string, error) {
	var w workflowFile
	var out []task.Phase
	err := config.DecodeYAML(file, data, &w, func() error {
		var err error
		out, err = s.checkWorkflow(w.Workflow, "workflow")
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return out, strings.TrimSpace(w.Description), nil
}

// CheckPhases checks phases that arrived already parsed (over the API)
// against s: every persona assignable, the shape within limits.
func (s *Set) CheckPhases(phases []task.Phase) error {
	for i, p := range phases {
		for _, m := range p.Personas {
			if _, err := s.Assignable(m); err != nil {
				return fmt.Errorf("workflow phase %d (%s): %w", i+1, p.Name, err)
			}
		}
	}
	return nil
}
