package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// personasOverride changes a built-in persona, disables one, adds one, and
// sets a chain and a workflow of its own.
const personasOverride = `personas:
  senior:
    model-tier: worker
    description: Senior, on the cheaper tier
  junior:
    enabled: false
  dba:
    description: Database specialist
    model-tier: expert
    system-prompt: |
      You know databases.
      Indexes first.
    auto-assign: [databases]
task-defaults:
  escalation-chain: [mid, senior, dba]
workflows:
  quick:
    - phase: build
      persona: dba
    - phase: check
      personas: [reviewer, senior]
      review: true
      instructions: Look hard.
`

// personaHome returns a NEURAPHAGE_HOME whose personas.yaml holds yaml
// (none when yaml is empty), and the file's path.
func personaHome(t *testing.T, yaml string) (home, file string) {
	t.Helper()
	home = t.TempDir()
	file = filepath.Join(home, "config", "personas.yaml")
	if yaml == "" {
		return home, file
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, file
}

func TestPersonaListHuman(t *testing.T) {
	t.Parallel()
	home, file := personaHome(t, personasOverride)
	code, out, errOut := runCLI(t, home, "", "persona", "list")
	want := `NAME       TIER    ORIGIN      STATE              DESCRIPTION
senior     worker  overridden  enabled            Senior, on the cheaper tier
mid        worker  built-in    enabled            Solid engineer, explains reasoning clearly
junior     worker  overridden  disabled           Careful learner for small, well-defined changes
reviewer   expert  built-in    enabled            Critical eye for code review, security and quality
architect  expert  built-in    enabled            Systems thinker, designs for scale and maintainability
router     router  built-in    enabled, internal  Fast classifier that picks a persona for a new task
watcher    router  built-in    enabled, internal  Monitors running tasks for stuck states and helps unstick t…
syncer     router  built-in    enabled, internal  Routes learnings between concurrent tasks
dba        expert  custom      enabled            Database specialist
default persona: mid; escalation chain: mid → senior → dba
from the built-in personas and ` + file + "\n"
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("persona list (-want +got):\n%s", diff)
	}
}

func TestPersonaListWithoutAFile(t *testing.T) {
	t.Parallel()
	home, file := personaHome(t, "")
	code, out, errOut := runCLI(t, home, "", "persona", "ls")
	if code != ExitOK || !strings.Contains(out, "\nmid        worker  built-in  enabled ") ||
		!strings.HasSuffix(out, "default persona: mid; escalation chain: junior → mid → senior → architect\nbuilt-in personas only: there is no "+file+"\n") {
		t.Errorf("exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
	code, out, _ = runCLI(t, home, "", "persona", "list", "--json")
	var l struct {
		File       string `json:"file"`
		FileExists bool   `json:"file_exists"`
		Personas   []struct {
			Key string `json:"key"`
		} `json:"personas"`
	}
	if err := json.Unmarshal([]byte(out), &l); code != ExitOK || err != nil || l.File != file || l.FileExists || len(l.Personas) != 8 {
		t.Errorf("--json: exit %d, %v, %+v", code, err, l)
	}
}

func TestPersonaListJSON(t *testing.T) {
	t.Parallel()
	home, file := personaHome(t, personasOverride)
	code, out, errOut := runCLI(t, home, "", "persona", "list", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	type entry struct {
		Key         string   `json:"key"`
		Tier        string   `json:"model_tier"`
		Origin      string   `json:"origin"`
		Enabled     bool     `json:"enabled"`
		Internal    bool     `json:"internal"`
		Assignable  bool     `json:"assignable"`
		Overridden  []string `json:"overridden"`
		RunInterval string   `json:"run_interval"`
	}
	var got struct {
		File         string  `json:"file"`
		FileExists   bool    `json:"file_exists"`
		Personas     []entry `json:"personas"`
		TaskDefaults struct {
			DefaultPersona  string   `json:"default_persona"`
			AllowEscalation bool     `json:"allow_escalation"`
			EscalationChain []string `json:"escalation_chain"`
			AutoRoute       bool     `json:"auto_route"`
			RouterTimeout   string   `json:"router_timeout"`
		} `json:"task_defaults"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if got.File != file || !got.FileExists {
		t.Errorf("file %q, exists %v; want %q, true", got.File, got.FileExists, file)
	}
	byKey := map[string]entry{}
	for _, p := range got.Personas {
		byKey[p.Key] = p
	}
	checks := map[string]entry{
		"senior":  {Key: "senior", Tier: "worker", Origin: "overridden", Enabled: true, Assignable: true, Overridden: []string{"description", "model-tier"}},
		"junior":  {Key: "junior", Tier: "worker", Origin: "overridden", Overridden: []string{"enabled"}},
		"dba":     {Key: "dba", Tier: "expert", Origin: "custom", Enabled: true, Assignable: true, Overridden: []string{"description", "model-tier", "system-prompt", "auto-assign"}},
		"watcher": {Key: "watcher", Tier: "router", Origin: "built-in", Enabled: true, Internal: true, RunInterval: "30s"},
	}
	for k, want := range checks {
		if diff := cmp.Diff(want, byKey[k]); diff != "" {
			t.Errorf("persona %s (-want +got):\n%s", k, diff)
		}
	}
	d := got.TaskDefaults
	if d.DefaultPersona != "mid" || !d.AllowEscalation || !cmp.Equal(d.EscalationChain, []string{"mid", "senior", "dba"}) || !d.AutoRoute || d.RouterTimeout != "20s" {
		t.Errorf("task_defaults %+v", d)
	}
}

func TestPersonaShow(t *testing.T) {
	t.Parallel()
	home, _ := personaHome(t, personasOverride)
	code, out, errOut := runCLI(t, home, "", "persona", "show", "dba")
	want := `persona:      dba
name:         Dba
description:  Database specialist
model tier:   expert
origin:       custom (added in personas.yaml)
state:        enabled
auto-assign:  databases
escalation:   step 3 of 3 (mid → senior → dba)
system prompt:
  You know databases.
  Indexes first.
`
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("persona show dba (-want +got):\n%s", diff)
	}

	code, out, _ = runCLI(t, home, "", "persona", "show", "senior")
	for _, s := range []string{
		"model tier:   worker\n",
		"origin:       overridden (personas.yaml sets description, model-tier; the rest is built in)\n",
		"escalation:   step 2 of 3 (mid → senior → dba)\n",
		"system prompt:\n  You are a senior software engineer",
	} {
		if code != ExitOK || !strings.Contains(out, s) {
			t.Errorf("persona show senior: exit %d, lacks %q:\n%s", code, s, out)
		}
	}

	code, out, _ = runCLI(t, home, "", "persona", "show", "mid")
	if code != ExitOK || !strings.Contains(out, "default:      yes: ") {
		t.Errorf("persona show mid: exit %d, does not say it is the default:\n%s", code, out)
	}
	code, out, _ = runCLI(t, home, "", "persona", "show", "router")
	if code != ExitOK || !strings.Contains(out, "state:        enabled, internal: runs Neuraphage itself, never given to tasks\n") {
		t.Errorf("persona show router: exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI(t, home, "", "persona", "show", "junior")
	if code != ExitOK || !strings.Contains(out, "state:        disabled: tasks cannot be given it\n") {
		t.Errorf("persona show junior: exit %d:\n%s", code, out)
	}

	code, out, _ = runCLI(t, home, "", "persona", "show", "senior", "--json")
	var p struct {
		Key          string   `json:"key"`
		Tier         string   `json:"model_tier"`
		SystemPrompt string   `json:"system_prompt"`
		Overridden   []string `json:"overridden"`
		Origin       string   `json:"origin"`
	}
	if err := json.Unmarshal([]byte(out), &p); code != ExitOK || err != nil || p.Key != "senior" || p.Tier != "worker" ||
		p.Origin != "overridden" || !cmp.Equal(p.Overridden, []string{"description", "model-tier"}) || !strings.HasPrefix(p.SystemPrompt, "You are a senior") {
		t.Errorf("--json: exit %d, %v, %+v", code, err, p)
	}
}

func TestPersonaShowUnknownNameIsAUsageError(t *testing.T) {
	t.Parallel()
	home, _ := personaHome(t, personasOverride)
	code, out, errOut := runCLI(t, home, "", "persona", "show", "principal")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, `no persona named "principal"`) ||
		!strings.Contains(errOut, "hint: personas: senior, mid, junior, reviewer, architect, router, watcher, syncer, dba (`neuraphage persona list`)") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, args := range [][]string{{"persona", "show"}, {"persona", "list", "x"}, {"persona", "bogus"}} {
		code, _, errOut := runCLI(t, home, "", args...)
		if code != ExitUsage || !strings.Contains(errOut, "hint: ") {
			t.Errorf("%q: exit %d, stderr %q; want a usage error with a hint", args, code, errOut)
		}
	}
}

// TestBrokenPersonasFile: every command that reads personas.yaml reports
// its mistake with file, line and key, and fails as `config show` does with
// a broken config file (exit 1).
func TestBrokenPersonasFile(t *testing.T) {
	t.Parallel()
	home, file := personaHome(t, "personas:\n  senior:\n    model-tier: huge\n")
	want := file + `:3: personas.senior.model-tier: "huge" is not a model tier`
	for _, args := range [][]string{
		{"persona", "list"}, {"persona", "list", "--json"}, {"persona", "show", "senior"},
		{"workflow", "list"}, {"workflow", "show", "design-review"},
	} {
		code, out, errOut := runCLI(t, home, "", args...)
		if code != ExitFailed || out != "" || !strings.HasPrefix(errOut, "neuraphage: "+want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1 and %q", args, code, out, errOut, want)
		}
	}
}
