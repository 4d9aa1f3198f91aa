package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestWorkflowList(t *testing.T) {
	t.Parallel()
	home, file := personaHome(t, personasOverride)
	code, out, errOut := runCLI(t, home, "", "workflow", "list")
	want := `NAME           ORIGIN    PHASES
design-review  built-in  design (architect) → implement (mid) → review (reviewer, senior) → revise (mid)
quick          custom    build (dba) → check (reviewer, senior)
`
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("workflow list (-want +got):\n%s", diff)
	}

	code, out, _ = runCLI(t, home, "", "workflow", "list", "--json")
	var l struct {
		File      string             `json:"file"`
		Workflows []persona.Workflow `json:"workflows"`
	}
	if err := json.Unmarshal([]byte(out), &l); code != ExitOK || err != nil {
		t.Fatalf("--json: exit %d, %v:\n%s", code, err, out)
	}
	wantQuick := persona.Workflow{Name: "quick", Origin: "custom", Phases: []task.Phase{
		{Name: "build", Personas: []string{"dba"}},
		{Name: "check", Personas: []string{"reviewer", "senior"}, Review: true, Instructions: "Look hard."},
	}}
	if l.File != file || len(l.Workflows) != 2 || l.Workflows[0].Name != "design-review" {
		t.Fatalf("--json: %+v", l)
	}
	if diff := cmp.Diff(wantQuick, l.Workflows[1]); diff != "" {
		t.Errorf("--json quick (-want +got):\n%s", diff)
	}
}

func TestWorkflowShow(t *testing.T) {
	t.Parallel()
	home, _ := personaHome(t, personasOverride)
	code, out, errOut := runCLI(t, home, "", "workflow", "show", "design-review")
	want := `workflow design-review (built-in): 4 phases
1 design: architect
    Design the change; do not implement it. Read the code you need, then
    call complete_task with the design as the summary: components, data
    flow, risks and the steps to build it. The next phase builds from it.
2 implement: mid
3 review: reviewer, senior (in parallel; review: its findings go to the later phases)
4 revise: mid
`
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("workflow show (-want +got):\n%s", diff)
	}

	code, out, _ = runCLI(t, home, "", "workflow", "show", "quick", "--json")
	var w persona.Workflow
	if err := json.Unmarshal([]byte(out), &w); code != ExitOK || err != nil || w.Name != "quick" || len(w.Phases) != 2 || !w.Phases[1].Review {
		t.Errorf("--json: exit %d, %v, %+v", code, err, w)
	}

	code, out, errOut = runCLI(t, home, "", "workflow", "show", "nope")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, `no workflow named "nope"`) ||
		!strings.Contains(errOut, "hint: workflows: design-review, quick (`neuraphage workflow list`)\n") {
		t.Errorf("unknown: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// createRecorder serves task creation on a fake daemon under home, handing
// every request it receives to the returned channel.
func createRecorder(t *testing.T, yaml string) (home string, reqs chan api.CreateTaskRequest) {
	t.Helper()
	reqs = make(chan api.CreateTaskRequest, 8)
	home = fakeDaemon(t, map[string]http.HandlerFunc{
		"POST /v1/tasks": func(w http.ResponseWriter, r *http.Request) {
			var req api.CreateTaskRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				w.WriteHeader(http.StatusBadRequest)
				writeAPI(w, api.Error{Code: api.CodeInvalid, Message: err.Error()})
				return
			}
			reqs <- req
			w.WriteHeader(http.StatusCreated)
			writeAPI(w, task.Task{ID: "t-wf001", Description: req.Description, Persona: req.Persona, Status: task.Queued, Workflow: req.Workflow})
		},
	})
	if yaml != "" {
		file := filepath.Join(home, "config", "personas.yaml")
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home, reqs
}

// gitRepo makes an empty repository for tasks to be created on.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := git.Run(context.Background(), dir, "init", "-q"); err != nil {
		t.Skipf("git init: %v", err)
	}
	return dir
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTaskNewWithAWorkflowFile(t *testing.T) {
	t.Parallel()
	home, reqs := createRecorder(t, personasOverride)
	repo := gitRepo(t)
	file := writeFile(t, t.TempDir(), "wf.yaml", `description: Add an index on users.email
workflow:
  - phase: design
    persona: architect
    instructions: Plan only.
  - phase: review
    personas: [reviewer, dba]
  - phase: fix
    personas: [mid, senior]
    mode: sequential
`)
	code, out, errOut := runCLI(t, home, "", "task", "new", "--repo", repo, "--workflow", file)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := "created t-wf001 (queued)\nworkflow of 4 phases: design (architect) → review (reviewer, dba) → fix (mid) → fix (senior)\n"
	if out != want {
		t.Errorf("output %q; want %q", out, want)
	}
	req := <-reqs
	wantPhases := []task.Phase{
		{Name: "design", Personas: []string{"architect"}, Instructions: "Plan only."},
		{Name: "review", Personas: []string{"reviewer", "dba"}, Review: true},
		{Name: "fix", Personas: []string{"mid"}},
		{Name: "fix", Personas: []string{"senior"}},
	}
	if diff := cmp.Diff(wantPhases, req.Workflow); diff != "" {
		t.Errorf("workflow sent (-want +got):\n%s", diff)
	}
	if req.Description != "Add an index on users.email" || req.Persona != "" || req.Repo != repo {
		t.Errorf("request %+v", req)
	}

	// The argument wins over the file's description; -q prints the id alone.
	code, out, errOut = runCLI(t, home, "", "task", "new", "Index users.email", "--repo", repo, "--workflow", file, "-q")
	if code != ExitOK || out != "t-wf001\n" {
		t.Errorf("-q: exit %d, stderr %q, output %q", code, errOut, out)
	}
	if req := <-reqs; req.Description != "Index users.email" || len(req.Workflow) != 4 {
		t.Errorf("request %+v", req)
	}
}

func TestTaskNewWithANamedWorkflow(t *testing.T) {
	t.Parallel()
	home, reqs := createRecorder(t, personasOverride)
	repo := gitRepo(t)
	code, out, errOut := runCLI(t, home, "", "task", "new", "Speed up the user search", "--repo", repo, "--workflow", "quick", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	wantPhases := []task.Phase{
		{Name: "build", Personas: []string{"dba"}},
		{Name: "check", Personas: []string{"reviewer", "senior"}, Review: true, Instructions: "Look hard."},
	}
	var got task.Task
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.ID != "t-wf001" || !cmp.Equal(got.Workflow, wantPhases) {
		t.Errorf("--json: %v, %+v", err, got)
	}
	if diff := cmp.Diff(wantPhases, (<-reqs).Workflow); diff != "" {
		t.Errorf("workflow sent (-want +got):\n%s", diff)
	}
}

// TestTaskNewUsageErrors: mistakes in --workflow and --persona exit 2 with
// a hint before the daemon is asked anything.
func TestTaskNewUsageErrors(t *testing.T) {
	t.Parallel()
	home, reqs := createRecorder(t, personasOverride)
	repo := gitRepo(t)
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.yaml", "description: x\nworkflow:\n  - phase: design\n    persona: architect\n  - phase: build\n    persona: principal\n")
	noDesc := writeFile(t, dir, "nodesc.yaml", "workflow:\n  - phase: build\n    persona: mid\n")
	tests := []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"workflow file with a mistake", []string{"--workflow", bad},
			[]string{bad + ":6: workflow.1.persona: ", `persona "principal": no such persona`, "hint: a workflow file holds `workflow:`"}},
		{"unknown workflow", []string{"x", "--workflow", "nope"},
			[]string{`--workflow "nope": no such file, and no workflow of that name in personas.yaml`, "hint: workflows: design-review, quick (`neuraphage workflow list`); or the path of a workflow file"}},
		{"workflow and persona", []string{"x", "--workflow", "quick", "--persona", "mid"},
			[]string{"--workflow and --persona do not go together", "hint: "}},
		{"no description anywhere", []string{"--workflow", noDesc},
			[]string{"task new needs a DESCRIPTION", "hint: give it as an argument, or as `description:` in the workflow file"}},
		{"no description, no workflow", nil,
			[]string{"task new needs a DESCRIPTION", `hint: neuraphage task new "add token expiry checks"`}},
		{"two arguments", []string{"add", "expiry"},
			[]string{"takes one DESCRIPTION, got 2 arguments", "hint: quote it"}},
		{"unknown persona", []string{"x", "--persona", "principal"},
			[]string{`--persona "principal": no such persona`, "hint: personas a task can be given: senior, mid, reviewer, architect, dba (`neuraphage persona list`)"}},
		{"internal persona", []string{"x", "--persona", "router"},
			[]string{`--persona "router": internal to Neuraphage`, "hint: personas a task can be given: "}},
		{"disabled persona", []string{"x", "--persona", "junior"},
			[]string{`--persona "junior": disabled`}},
	}
	for _, tt := range tests {
		args := append([]string{"task", "new", "--repo", repo}, tt.args...)
		code, out, errOut := runCLI(t, home, "", args...)
		if code != ExitUsage || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2", tt.name, code, out, errOut)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tt.name, w, errOut)
			}
		}
	}
	select {
	case r := <-reqs:
		t.Errorf("a usage error created a task: %+v", r)
	default:
	}

	// A persona the file allows goes through, and is sent.
	code, out, errOut := runCLI(t, home, "", "task", "new", "x", "--repo", repo, "--persona", "dba")
	if code != ExitOK || out != "created t-wf001 (queued)\n" {
		t.Errorf("--persona dba: exit %d, stderr %q, output %q", code, errOut, out)
	}
	if r := <-reqs; r.Persona != "dba" || r.Workflow != nil {
		t.Errorf("request %+v", r)
	}
}

// TestTaskNewWithABrokenPersonasFile: --persona is left to the daemon when
// personas.yaml cannot be read; --workflow cannot be read without it.
func TestTaskNewWithABrokenPersonasFile(t *testing.T) {
	t.Parallel()
	home, reqs := createRecorder(t, "personas: [\n")
	repo := gitRepo(t)
	code, _, errOut := runCLI(t, home, "", "task", "new", "x", "--repo", repo, "--persona", "mid")
	if code != ExitOK {
		t.Errorf("--persona: exit %d, stderr %q", code, errOut)
	}
	if r := <-reqs; r.Persona != "mid" {
		t.Errorf("request %+v", r)
	}
	code, _, errOut = runCLI(t, home, "", "task", "new", "x", "--repo", repo, "--workflow", "design-review")
	if code != ExitFailed || !strings.Contains(errOut, filepath.Join(home, "config", "personas.yaml")+":") {
		t.Errorf("--workflow: exit %d, stderr %q; want exit 1 naming personas.yaml", code, errOut)
	}
}
