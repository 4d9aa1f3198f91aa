package task

import "fmt"

// Phase is one step of a workflow task (docs/personas.md): one persona, or
// several working at once (a parallel review). Each phase runs as child
// tasks of the workflow task, on its branch, after the phase before it.
type Phase struct {
	Name     string   `json:"name"`
	Personas []string `json:"personas"`
	// Review phases end with structured findings that the next phase gets.
	Review bool `json:"review,omitempty"`
	// Instructions are added to the context of the phase's tasks.
	Instructions string `json:"instructions,omitempty"`
}

// PhaseRef marks a child task that runs phase Index of its parent's
// workflow.
type PhaseRef struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Review bool   `json:"review,omitempty"`
}

// Limits of a workflow.
const (
	MaxPhases           = 16
	MaxPersonasPerPhase = 8
)

// checkWorkflow validates the shape of a workflow (which personas exist is
// the daemon's to check).
func checkWorkflow(phases []Phase) error {
	if len(phases) > MaxPhases {
		return &InvalidError{Field: "workflow", Msg: fmt.Sprintf("has %d phases; at most %d", len(phases), MaxPhases)}
	}
	for i, p := range phases {
		switch {
		case p.Name == "":
			return &InvalidError{Field: "workflow", Msg: fmt.Sprintf("phase %d has no name", i+1)}
		case len(p.Personas) == 0:
			return &InvalidError{Field: "workflow", Msg: fmt.Sprintf("phase %d (%s) names no persona", i+1, p.Name)}
		case len(p.Personas) > MaxPersonasPerPhase:
			return &InvalidError{Field: "workflow", Msg: fmt.Sprintf("phase %d (%s) names %d personas; at most %d", i+1, p.Name, len(p.Personas), MaxPersonasPerPhase)}
		}
	}
	return nil
}
