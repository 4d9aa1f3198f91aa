package persona_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestBuiltInDesignReview(t *testing.T) {
	t.Parallel()
	s := persona.Defaults()
	w, ok := s.Workflow("design-review")
	if !ok {
		t.Fatal("no built-in design-review workflow")
	}
	want := persona.Workflow{
		Name:   "design-review",
		Origin: persona.BuiltIn,
		Phases: []task.Phase{
			{Name: "design", Personas: []string{"architect"}, Instructions: "Design the change; do not implement it. Read the code you need, then\n" +
				"call complete_task with the design as the summary: components, data\n" +
				"flow, risks and the steps to build it. The next phase builds from it."},
			{Name: "implement", Personas: []string{"mid"}},
			{Name: "review", Personas: []string{"reviewer", "senior"}, Review: true},
			{Name: "revise", Personas: []string{"mid"}},
		},
	}
	if diff := cmp.Diff(want, w); diff != "" {
		t.Errorf("design-review (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]persona.Workflow{want}, s.Workflows()); diff != "" {
		t.Errorf("Workflows() (-want +got):\n%s", diff)
	}
	if _, ok := s.Workflow("nope"); ok {
		t.Error("Workflow(nope) found a workflow")
	}
}

func TestUserWorkflows(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `workflows:
  double-check:
    - phase: review
      personas: [reviewer, " senior "]
      mode: sequential
      instructions: "  Look hard.  "
    - phase: fix
      persona: mid
      review: true
    - phase: Review-again
      personas: [junior, mid]
      mode: parallel
      review: false
  design-review:
    - phase: design
      persona: senior
`)
	dc, ok := s.Workflow("double-check")
	if !ok {
		t.Fatal("no double-check workflow")
	}
	want := persona.Workflow{Name: "double-check", Origin: persona.Custom, Phases: []task.Phase{
		{Name: "review", Personas: []string{"reviewer"}, Review: true, Instructions: "Look hard."},
		{Name: "review", Personas: []string{"senior"}, Review: true, Instructions: "Look hard."},
		{Name: "fix", Personas: []string{"mid"}, Review: true},
		{Name: "Review-again", Personas: []string{"junior", "mid"}, Review: false},
	}}
	if diff := cmp.Diff(want, dc); diff != "" {
		t.Errorf("double-check (-want +got):\n%s", diff)
	}
	dr, _ := s.Workflow("design-review")
	wantDR := persona.Workflow{Name: "design-review", Origin: persona.Overridden, Phases: []task.Phase{{Name: "design", Personas: []string{"senior"}}}}
	if diff := cmp.Diff(wantDR, dr); diff != "" {
		t.Errorf("overridden design-review (-want +got):\n%s", diff)
	}
	var names []string
	for _, w := range s.Workflows() {
		names = append(names, w.Name)
	}
	if diff := cmp.Diff([]string{"design-review", "double-check"}, names); diff != "" {
		t.Errorf("Workflows() names (-want +got):\n%s", diff)
	}
}

func TestWorkflowErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		line int
		key  string
		msg  string
	}{
		{
			name: "persona and personas both set",
			yaml: "workflows:\n  wf:\n    - phase: build\n      persona: mid\n      personas: [senior]\n",
			line: 5, key: "workflows.wf.0.personas", msg: "set persona or personas, not both",
		},
		{
			name: "unknown persona in a list",
			yaml: "workflows:\n  wf:\n    - phase: design\n      persona: architect\n    - phase: review\n      personas:\n        - reviewer\n        - nobody\n",
			line: 8, key: "workflows.wf.1.personas.1", msg: `persona "nobody": no such persona`,
		},
		{
			name: "internal persona in a list",
			yaml: "workflows:\n  wf:\n    - phase: review\n      personas: [reviewer, syncer]\n",
			line: 4, key: "workflows.wf.0.personas.1", msg: `persona "syncer": internal to Neuraphage`,
		},
		{
			name: "internal persona alone",
			yaml: "workflows:\n  wf:\n    - phase: route\n      persona: router\n",
			line: 4, key: "workflows.wf.0.persona", msg: `persona "router": internal to Neuraphage, not assignable to tasks`,
		},
		{
			name: "disabled custom persona",
			yaml: "personas:\n  ghost:\n    enabled: false\nworkflows:\n  wf:\n    - phase: haunt\n      persona: ghost\n",
			line: 7, key: "workflows.wf.0.persona", msg: `persona "ghost": disabled`,
		},
		{
			name: "no persona",
			yaml: "workflows:\n  wf:\n    - phase: build\n      mode: parallel\n",
			line: 3, key: "workflows.wf.0.persona", msg: "is missing; name the persona",
		},
		{
			name: "no phase name",
			yaml: "workflows:\n  wf:\n    - persona: mid\n",
			line: 3, key: "workflows.wf.0.phase", msg: "every phase needs a name",
		},
		{
			name: "unknown mode",
			yaml: "workflows:\n  wf:\n    - phase: build\n      personas: [mid, senior]\n      mode: relay\n",
			line: 5, key: "workflows.wf.0.mode", msg: `"relay" is not a mode; want parallel or sequential`,
		},
		{
			name: "no phases",
			yaml: "workflows:\n  wf: []\n",
			line: 2, key: "workflows.wf", msg: "has no phases",
		},
		{
			name: "invalid name",
			yaml: "workflows:\n  Big_Flow:\n    - phase: build\n      persona: mid\n",
			line: 2, key: "workflows.Big_Flow", msg: "not a valid workflow name",
		},
		{
			name: "too many personas in a phase",
			yaml: "workflows:\n  wf:\n    - phase: build\n      persona: mid\n    - phase: swarm\n      personas: [mid, mid, mid, mid, mid, mid, mid, mid, mid]\n",
			line: 5, key: "workflows.wf.1", msg: "names 9 personas; at most 8",
		},
		{
			name: "too many phases after expansion",
			yaml: "workflows:\n  wf:\n    - phase: a\n      personas: [mid, mid, mid, mid, mid, mid, mid, mid, mid]\n      mode: sequential\n    - phase: b\n      personas: [mid, mid, mid, mid, mid, mid, mid, mid]\n      mode: sequential\n",
			line: 2, key: "workflows.wf", msg: "has 17 phases; at most 16",
		},
		{
			name: "unknown key in a phase",
			yaml: "workflows:\n  wf:\n    - phase: build\n      persona: mid\n      agent: claude\n",
			line: 5, key: "workflows.wf.0.agent", msg: "unknown key",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkErr(t, parseErr(t, tt.yaml), tt.line, tt.key, tt.msg)
		})
	}
}

// An oversized phase after a sequential one is reported at the index of the
// phase as written, not of the expanded list.
func TestOversizedPhaseAfterSequentialPhase(t *testing.T) {
	t.Parallel()
	ce := parseErr(t, `workflows:
  wf:
    - phase: build
      personas: [mid, senior]
      mode: sequential
    - phase: swarm
      personas: [mid, mid, mid, mid, mid, mid, mid, mid, mid]
`)
	if ce.Key == "workflows.wf.2" {
		t.Fatalf("checkWorkflow names an oversized phase by its index after sequential expansion, not as written (got %v; want line 6, workflows.wf.1)", ce)
	}
	checkErr(t, ce, 6, "workflows.wf.1", "names 9 personas; at most 8")
}

const workflowFile = "wf.yaml"

func TestParseWorkflow(t *testing.T) {
	t.Parallel()
	s := persona.Defaults()
	phases, desc, err := s.ParseWorkflow(workflowFile, []byte(`description: |
  Add rate limiting to the API.
workflow:
  - phase: design
    persona: architect
  - phase: build
    personas: [mid, junior]
    mode: sequential
  - phase: review
    personas: [reviewer, senior]
`))
	if err != nil {
		t.Fatalf("ParseWorkflow: %v", err)
	}
	if desc != "Add rate limiting to the API." {
		t.Errorf("description = %q", desc)
	}
	want := []task.Phase{
		{Name: "design", Personas: []string{"architect"}},
		{Name: "build", Personas: []string{"mid"}},
		{Name: "build", Personas: []string{"junior"}},
		{Name: "review", Personas: []string{"reviewer", "senior"}, Review: true},
	}
	if diff := cmp.Diff(want, phases); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	// The result is what task validation accepts.
	if err := s.CheckPhases(phases); err != nil {
		t.Errorf("CheckPhases(parsed phases) = %v", err)
	}

	// Without a description.
	phases, desc, err = s.ParseWorkflow(workflowFile, []byte("workflow:\n  - {phase: fix, persona: senior}\n"))
	if err != nil || desc != "" || len(phases) != 1 || phases[0].Personas[0] != "senior" {
		t.Errorf("ParseWorkflow without description = %+v, %q, %v", phases, desc, err)
	}
}

func TestParseWorkflowErrors(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "personas:\n  router:\n    enabled: false\n")
	tests := []struct {
		name string
		yaml string
		line int
		key  string
		msg  string
	}{
		{
			name: "internal persona",
			yaml: "description: Design it\nworkflow:\n  - phase: design\n    persona: architect\n  - phase: route\n    persona: watcher\n",
			line: 6, key: "workflow.1.persona", msg: `persona "watcher": internal`,
		},
		{
			name: "disabled persona",
			yaml: "workflow:\n  - phase: route\n    persona: router\n",
			line: 3, key: "workflow.0.persona", msg: `persona "router": disabled`,
		},
		{
			name: "unknown persona in a list",
			yaml: "workflow:\n  - phase: review\n    personas:\n      - senior\n      - wizard\n",
			line: 5, key: "workflow.0.personas.1", msg: `persona "wizard": no such persona; want one of senior, mid, junior, reviewer, architect`,
		},
		{
			name: "both persona and personas",
			yaml: "workflow:\n  - phase: review\n    persona: mid\n    personas: [senior]\n",
			line: 4, key: "workflow.0.personas", msg: "not both",
		},
		{
			name: "unknown key",
			yaml: "workflow:\n  - phase: review\n    persona: mid\n    engine: codex\n",
			line: 4, key: "workflow.0.engine", msg: "unknown key",
		},
		{
			name: "personas.yaml shape",
			yaml: "workflows:\n  x:\n    - phase: review\n",
			line: 1, key: "workflows", msg: "unknown key",
		},
		{
			name: "empty file",
			yaml: "",
			line: 0, key: "workflow", msg: "has no phases",
		},
		{
			name: "syntax error",
			yaml: "workflow:\n  - phase: review\n    persona: mid: senior\n",
			line: 3, key: "", msg: "invalid YAML",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			phases, _, err := s.ParseWorkflow(workflowFile, []byte(tt.yaml))
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("ParseWorkflow = %+v, %v; want a *config.Error", phases, err)
			}
			if ce.File != workflowFile || ce.Line != tt.line || ce.Key != tt.key {
				t.Errorf("error at %s:%d key %q, want %s:%d key %q (%v)", ce.File, ce.Line, ce.Key, workflowFile, tt.line, tt.key, ce)
			}
			if !strings.Contains(ce.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", ce.Error(), tt.msg)
			}
			if phases != nil {
				t.Errorf("phases = %+v returned with the error", phases)
			}
		})
	}
}

func TestCheckPhases(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "personas:\n  ghost:\n    enabled: false\n")
	if err := s.CheckPhases(nil); err != nil {
		t.Errorf("CheckPhases(nil) = %v", err)
	}
	ok := []task.Phase{{Name: "build", Personas: []string{"mid"}}, {Name: "review", Personas: []string{"reviewer", "senior"}, Review: true}}
	if err := s.CheckPhases(ok); err != nil {
		t.Errorf("CheckPhases(valid) = %v", err)
	}
	tests := []struct {
		name   string
		phases []task.Phase
		msg    string
		why    string
	}{
		{
			name:   "internal persona",
			phases: []task.Phase{{Name: "build", Personas: []string{"mid"}}, {Name: "review", Personas: []string{"reviewer", "router"}}},
			msg:    "workflow phase 2 (review): ", why: "internal to Neuraphage, not assignable to tasks",
		},
		{
			name:   "disabled persona",
			phases: []task.Phase{{Name: "haunt", Personas: []string{"ghost"}}},
			msg:    "workflow phase 1 (haunt): ", why: "disabled (enabled: false in personas.yaml)",
		},
		{
			name:   "unknown persona",
			phases: []task.Phase{{Name: "build", Personas: []string{"Mid"}}},
			msg:    "workflow phase 1 (build): ", why: "no such persona",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := s.CheckPhases(tt.phases)
			var ue *persona.UnknownError
			if !errors.As(err, &ue) || ue.Why != tt.why {
				t.Fatalf("CheckPhases = %v, want an *UnknownError (%s)", err, tt.why)
			}
			if !strings.HasPrefix(err.Error(), tt.msg) {
				t.Errorf("error %q does not start %q", err, tt.msg)
			}
		})
	}
}

func TestNext(t *testing.T) {
	t.Parallel()
	s := persona.Defaults()
	for cur, want := range map[string]string{"junior": "mid", "mid": "senior", "senior": "architect"} {
		if got, err := s.Next(cur); got != want || err != nil {
			t.Errorf("Next(%s) = %q, %v; want %q", cur, got, err, want)
		}
	}
	tests := []struct {
		name, current, msg string
		set                *persona.Set
	}{
		{name: "top of the chain", current: "architect", set: s,
			msg: "architect is already the top of the escalation chain (junior → mid → senior → architect)"},
		{name: "not in the chain", current: "reviewer", set: s,
			msg: "reviewer is not in the escalation chain (junior → mid → senior → architect); name a persona with --to"},
		{name: "empty chain", current: "junior", set: mustParse(t, "task-defaults:\n  escalation-chain: []\n"),
			msg: "the escalation chain is empty (task-defaults.escalation-chain); name a persona with --to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.set.Next(tt.current)
			var ee *persona.EscalationError
			if !errors.As(err, &ee) || ee.Msg != tt.msg || got != "" {
				t.Errorf("Next(%s) = %q, %v; want *EscalationError %q", tt.current, got, err, tt.msg)
			}
		})
	}
}

func TestEscalationTarget(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "task-defaults:\n  escalation-chain: [mid, architect]\n")
	tests := []struct {
		name, current, to, want string
		escErr                  string // *EscalationError message
		unknownWhy              string // *UnknownError reason
	}{
		{name: "next in the chain", current: "mid", want: "architect"},
		{name: "junior is not in this chain", current: "junior", escErr: "junior is not in the escalation chain (mid → architect); name a persona with --to"},
		{name: "top of the chain", current: "architect", escErr: "architect is already the top of the escalation chain (mid → architect)"},
		{name: "--to outside the chain", current: "architect", to: "reviewer", want: "reviewer"},
		{name: "--to a weaker persona", current: "senior", to: "junior", want: "junior"},
		{name: "--to the same persona", current: "mid", to: "mid", escErr: "the task already runs as mid"},
		{name: "--to an internal persona", current: "mid", to: "router", unknownWhy: "internal to Neuraphage, not assignable to tasks"},
		{name: "--to an unknown persona", current: "mid", to: "wizard", unknownWhy: "no such persona"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.EscalationTarget(tt.current, tt.to)
			switch {
			case tt.escErr != "":
				var ee *persona.EscalationError
				if !errors.As(err, &ee) || ee.Msg != tt.escErr {
					t.Errorf("EscalationTarget(%q, %q) = %q, %v; want *EscalationError %q", tt.current, tt.to, got, err, tt.escErr)
				}
			case tt.unknownWhy != "":
				var ue *persona.UnknownError
				if !errors.As(err, &ue) || ue.Name != tt.to || ue.Why != tt.unknownWhy {
					t.Errorf("EscalationTarget(%q, %q) = %q, %v; want *UnknownError %q", tt.current, tt.to, got, err, tt.unknownWhy)
				}
			default:
				if err != nil || got != tt.want {
					t.Errorf("EscalationTarget(%q, %q) = %q, %v; want %q", tt.current, tt.to, got, err, tt.want)
				}
				return
			}
			if got != "" {
				t.Errorf("EscalationTarget(%q, %q) returned %q with its error", tt.current, tt.to, got)
			}
		})
	}

	// With the built-in chain: junior escalates to mid; architect is the top.
	d := persona.Defaults()
	if got, err := d.EscalationTarget("junior", ""); got != "mid" || err != nil {
		t.Errorf("built-in EscalationTarget(junior) = %q, %v; want mid", got, err)
	}
	var ee *persona.EscalationError
	if _, err := d.EscalationTarget("architect", ""); !errors.As(err, &ee) {
		t.Errorf("built-in EscalationTarget(architect) = %v, want *EscalationError", err)
	}
}

func TestUnknownErrorText(t *testing.T) {
	t.Parallel()
	_, err := persona.Defaults().Assignable("watcher")
	want := `persona "watcher": internal to Neuraphage, not assignable to tasks; want one of senior, mid, junior, reviewer, architect`
	if err == nil || err.Error() != want {
		t.Errorf("Assignable(watcher) = %v, want %q", err, want)
	}
}
