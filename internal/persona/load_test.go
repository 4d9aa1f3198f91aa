package persona_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/persona"
)

// userFile is the name user-file tests give Parse; errors must carry it.
const userFile = "personas.yaml"

// builtInKeys are the built-in personas in listing order.
var builtInKeys = []string{"senior", "mid", "junior", "reviewer", "architect", "router", "watcher", "syncer"}

func mustParse(t *testing.T, yaml string) *persona.Set {
	t.Helper()
	s, err := persona.Parse(userFile, []byte(yaml))
	if err != nil {
		t.Fatalf("Parse:\n%s\nerror: %v", yaml, err)
	}
	return s
}

// parseErr parses yaml, which must fail with a *config.Error.
func parseErr(t *testing.T, yaml string) *config.Error {
	t.Helper()
	s, err := persona.Parse(userFile, []byte(yaml))
	if err == nil {
		t.Fatalf("Parse:\n%s\n= %d personas, want an error", yaml, len(s.List()))
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("Parse error %v (%T) is not a *config.Error", err, err)
	}
	return ce
}

// checkErr asserts the file, line and key of ce and that its message
// holds msg.
func checkErr(t *testing.T, ce *config.Error, line int, key, msg string) {
	t.Helper()
	if ce.File != userFile || ce.Line != line || ce.Key != key {
		t.Errorf("error at %s:%d key %q, want %s:%d key %q (error: %v)", ce.File, ce.Line, ce.Key, userFile, line, key, ce)
	}
	if !strings.Contains(ce.Error(), msg) {
		t.Errorf("error %q does not say %q", ce.Error(), msg)
	}
}

func keys(ps []persona.Persona) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Key)
	}
	return out
}

func builtIn(t *testing.T, key string) persona.Persona {
	t.Helper()
	p, ok := persona.Defaults().Get(key)
	if !ok {
		t.Fatalf("built-in persona %q missing", key)
	}
	return p
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	s := persona.Defaults()
	if s.File != "" {
		t.Errorf("Defaults().File = %q, want empty", s.File)
	}
	if diff := cmp.Diff(builtInKeys, keys(s.List())); diff != "" {
		t.Errorf("built-in personas (-want +got):\n%s", diff)
	}
	for _, p := range s.List() {
		if p.Origin != persona.BuiltIn || p.Overridden != nil || !p.Enabled {
			t.Errorf("%s: origin %q, overridden %v, enabled %t; want built-in, none, enabled", p.Key, p.Origin, p.Overridden, p.Enabled)
		}
		internal := p.Key == "router" || p.Key == "watcher" || p.Key == "syncer"
		if p.Internal != internal || p.Assignable() == internal {
			t.Errorf("%s: internal %t, assignable %t; want internal %t", p.Key, p.Internal, p.Assignable(), internal)
		}
	}
	want := persona.TaskDefaults{
		DefaultPersona:  "mid",
		AllowEscalation: true,
		EscalationChain: []string{"junior", "mid", "senior", "architect"},
		AutoRoute:       true,
		RouterTimeout:   20 * time.Second,
	}
	if diff := cmp.Diff(want, s.Defaults); diff != "" {
		t.Errorf("task defaults (-want +got):\n%s", diff)
	}
	if w := builtIn(t, "watcher"); w.RunInterval != 30*time.Second || w.Tier != llm.TierRouter {
		t.Errorf("watcher: run interval %s, tier %s; want 30s, router", w.RunInterval, w.Tier)
	}
	// DefaultsYAML is a copy: changing it does not change the built-ins.
	y := persona.DefaultsYAML()
	if !strings.Contains(string(y), "escalation-chain: [junior, mid, senior, architect]") {
		t.Errorf("DefaultsYAML does not hold the built-in chain")
	}
	clear(y)
	if !strings.Contains(string(persona.DefaultsYAML()), "personas:") {
		t.Errorf("DefaultsYAML shares its bytes with the caller")
	}
}

func TestOverrideKeepsOtherFields(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "personas:\n  senior:\n    model-tier: worker\n")
	if s.File != userFile {
		t.Errorf("File = %q, want %q", s.File, userFile)
	}
	got, _ := s.Get("senior")
	want := builtIn(t, "senior")
	want.Tier = llm.TierWorker
	want.Origin = persona.Overridden
	want.Overridden = []string{"model-tier"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("senior (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(builtIn(t, "mid"), mustGet(t, s, "mid")); diff != "" {
		t.Errorf("mid, which the file does not name (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(builtInKeys, keys(s.List())); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestOverrideSeveralFields(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `personas:
  junior:
    name: "  Apprentice  "
    description: Small fixes
    system-prompt: |

      You fix typos.

    auto-assign: [Typo-Fixes, typo-fixes, " docs "]
`)
	got := mustGet(t, s, "junior")
	want := builtIn(t, "junior")
	want.Name = "Apprentice"
	want.Description = "Small fixes"
	want.SystemPrompt = "You fix typos."
	want.AutoAssign = []string{"typo-fixes", "docs"}
	want.Origin = persona.Overridden
	want.Overridden = []string{"name", "description", "system-prompt", "auto-assign"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("junior (-want +got):\n%s", diff)
	}
}

func mustGet(t *testing.T, s *persona.Set, key string) persona.Persona {
	t.Helper()
	p, ok := s.Get(key)
	if !ok {
		t.Fatalf("Get(%q): no such persona", key)
	}
	return p
}

func TestCustomPersonasFollowBuiltIns(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `personas:
  zeta:
    description: Writes release notes
    model-tier: router
    system-prompt: You write release notes.
    auto-assign: [release-notes]
  chaos-gremlin:
    name: Chaos Gremlin
    description: Breaks things on purpose
    model-tier: worker
    system-prompt: You look for ways things break.
    run-interval: 2m
`)
	wantOrder := append(slices.Clone(builtInKeys), "chaos-gremlin", "zeta")
	if diff := cmp.Diff(wantOrder, keys(s.List())); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	want := persona.Persona{
		Key:          "zeta",
		Name:         "Zeta", // derived from the key
		Description:  "Writes release notes",
		Tier:         llm.TierRouter,
		SystemPrompt: "You write release notes.",
		AutoAssign:   []string{"release-notes"},
		Enabled:      true,
		Origin:       persona.Custom,
		Overridden:   []string{"description", "model-tier", "system-prompt", "auto-assign"},
	}
	if diff := cmp.Diff(want, mustGet(t, s, "zeta")); diff != "" {
		t.Errorf("zeta (-want +got):\n%s", diff)
	}
	g := mustGet(t, s, "chaos-gremlin")
	if g.Name != "Chaos Gremlin" || g.Origin != persona.Custom || g.RunInterval != 2*time.Minute || !g.Assignable() {
		t.Errorf("chaos-gremlin = %+v", g)
	}
	if _, err := s.Assignable("zeta"); err != nil {
		t.Errorf("Assignable(zeta) = %v, want nil", err)
	}
}

func TestDisablePersona(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `personas:
  router:
    enabled: false
  scratch:
    enabled: false
`)
	r := mustGet(t, s, "router")
	if r.Enabled || r.Origin != persona.Overridden || !slices.Equal(r.Overridden, []string{"enabled"}) {
		t.Errorf("router: enabled %t, origin %q, overridden %v; want false, overridden, [enabled]", r.Enabled, r.Origin, r.Overridden)
	}
	if r.SystemPrompt != builtIn(t, "router").SystemPrompt {
		t.Errorf("disabling the router changed its system prompt")
	}
	if ok, why := s.Routable(); ok || why != "the router persona is disabled" {
		t.Errorf("Routable() = %t, %q; want false, the router persona is disabled", ok, why)
	}
	// A disabled custom persona needs none of the fields an enabled one does.
	sc := mustGet(t, s, "scratch")
	if sc.Enabled || sc.Origin != persona.Custom || sc.Name != "Scratch" {
		t.Errorf("scratch = %+v; want disabled, custom, named Scratch", sc)
	}
	_, err := s.Assignable("scratch")
	var ue *persona.UnknownError
	if !errors.As(err, &ue) || ue.Name != "scratch" || !strings.HasPrefix(ue.Why, "disabled") {
		t.Fatalf("Assignable(scratch) = %v, want *UnknownError disabled", err)
	}
	if slices.Contains(ue.Valid, "scratch") || !slices.Equal(ue.Valid, []string{"senior", "mid", "junior", "reviewer", "architect"}) {
		t.Errorf("Valid = %v, want the five assignable built-ins", ue.Valid)
	}
	// A task created as scratch before it was disabled runs as the default.
	if got := s.Effective("scratch").Key; got != "mid" {
		t.Errorf("Effective(scratch) = %s, want mid", got)
	}
	if got := s.Effective("senior").Key; got != "senior" {
		t.Errorf("Effective(senior) = %s, want senior", got)
	}
}

func TestRoutable(t *testing.T) {
	t.Parallel()
	if ok, why := persona.Defaults().Routable(); !ok || why != "" {
		t.Errorf("Defaults().Routable() = %t, %q; want true", ok, why)
	}
	s := mustParse(t, "task-defaults:\n  auto-route: false\n")
	if ok, why := s.Routable(); ok || !strings.Contains(why, "task-defaults.auto-route") {
		t.Errorf("Routable() with auto-route off = %t, %q", ok, why)
	}
}

func TestTaskDefaultsOverride(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `task-defaults:
  default-persona: senior
  allow-escalation: false
  escalation-chain: [mid, " architect "]
  router-timeout: 1s
`)
	want := persona.TaskDefaults{
		DefaultPersona:  "senior",
		AllowEscalation: false,
		EscalationChain: []string{"mid", "architect"},
		AutoRoute:       true, // kept from the built-ins
		RouterTimeout:   time.Second,
	}
	if diff := cmp.Diff(want, s.Defaults); diff != "" {
		t.Errorf("task defaults (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		line int
		key  string
		msg  string
	}{
		{
			name: "unknown key under a persona",
			yaml: "personas:\n  senior:\n    model-tier: worker\n    colour: blue\n",
			line: 4, key: "personas.senior.colour", msg: "unknown key",
		},
		{
			name: "unknown top-level key",
			yaml: "personas: {}\npersona:\n  senior: {}\n",
			line: 2, key: "persona", msg: "unknown key",
		},
		{
			name: "invalid model tier",
			yaml: "personas:\n  senior:\n    model-tier: genius\n",
			line: 3, key: "personas.senior.model-tier", msg: `"genius" is not a model tier; want one of router, worker, expert`,
		},
		{
			name: "custom persona without system prompt",
			yaml: "personas:\n  helper:\n    description: Helps\n    model-tier: worker\n",
			line: 2, key: "personas.helper.system-prompt", msg: "a persona needs a system prompt",
		},
		{
			name: "custom persona without model tier",
			yaml: "personas:\n  helper:\n    description: Helps\n    system-prompt: You help.\n",
			line: 2, key: "personas.helper.model-tier", msg: "a persona needs a model tier",
		},
		{
			name: "custom persona without description",
			yaml: "personas:\n  helper:\n    model-tier: worker\n    system-prompt: You help.\n",
			line: 2, key: "personas.helper.description", msg: "say in a line what the persona is for",
		},
		{
			name: "blank system prompt on a built-in",
			yaml: "personas:\n  mid:\n    system-prompt: \"   \"\n",
			line: 3, key: "personas.mid.system-prompt", msg: "is empty",
		},
		{
			name: "invalid custom persona name",
			yaml: "personas:\n  Big_Helper:\n    model-tier: worker\n",
			line: 2, key: "personas.Big_Helper", msg: "not a valid persona name",
		},
		{
			name: "invalid auto-assign category",
			yaml: "personas:\n  mid:\n    auto-assign:\n      - tests\n      - bug fixes\n",
			line: 5, key: "personas.mid.auto-assign.1", msg: `"bug fixes" is not a valid category`,
		},
		{
			name: "run interval out of range",
			yaml: "personas:\n  watcher:\n    run-interval: 500ms\n",
			line: 3, key: "personas.watcher.run-interval", msg: "want 1s to 24h",
		},
		{
			name: "wrong type",
			yaml: "personas:\n  mid:\n    enabled: sometimes\n",
			line: 3, key: "personas.mid.enabled", msg: `want true or false, got "sometimes"`,
		},
		{
			name: "built-in chain names a disabled persona",
			yaml: "personas:\n  junior:\n    enabled: false\n",
			line: 3, key: "personas.junior.enabled", msg: "junior is disabled but the escalation chain",
		},
		{
			name: "user chain names a disabled persona",
			yaml: "personas:\n  junior:\n    enabled: false\ntask-defaults:\n  escalation-chain:\n    - mid\n    - junior\n    - senior\n",
			line: 7, key: "task-defaults.escalation-chain.1", msg: `"junior" is disabled (enabled: false)`,
		},
		{
			name: "user chain names an unknown persona",
			yaml: "task-defaults:\n  escalation-chain:\n    - junior\n    - mid\n    - nobody\n",
			line: 5, key: "task-defaults.escalation-chain.2", msg: `"nobody" is not a persona`,
		},
		{
			name: "user chain names an internal persona",
			yaml: "task-defaults:\n  escalation-chain:\n    - junior\n    - router\n    - senior\n",
			line: 4, key: "task-defaults.escalation-chain.1", msg: `"router" is internal`,
		},
		{
			name: "user chain names a persona twice",
			yaml: "task-defaults:\n  escalation-chain:\n    - junior\n    - mid\n    - junior\n",
			line: 5, key: "task-defaults.escalation-chain.2", msg: `"junior" is in the chain twice`,
		},
		{
			name: "built-in default persona disabled",
			yaml: "# mine\npersonas:\n  mid:\n    enabled: false\n",
			line: 4, key: "personas.mid.enabled", msg: "mid is the default persona",
		},
		{
			name: "default persona the user set is disabled",
			yaml: "personas:\n  junior:\n    enabled: false\ntask-defaults:\n  default-persona: junior\n  escalation-chain: [mid, senior]\n",
			line: 5, key: "task-defaults.default-persona", msg: `"junior" is disabled or internal`,
		},
		{
			name: "default persona is internal",
			yaml: "task-defaults:\n  default-persona: watcher\n",
			line: 2, key: "task-defaults.default-persona", msg: `"watcher" is disabled or internal`,
		},
		{
			name: "default persona unknown",
			yaml: "task-defaults:\n  default-persona: nobody\n",
			line: 2, key: "task-defaults.default-persona", msg: `"nobody" is not a persona`,
		},
		{
			name: "router timeout too short",
			yaml: "task-defaults:\n  router-timeout: 500ms\n",
			line: 2, key: "task-defaults.router-timeout", msg: "is 500ms; want 1s to 10m",
		},
		{
			name: "router timeout too long",
			yaml: "task-defaults:\n  auto-route: true\n  router-timeout: 11m\n",
			line: 3, key: "task-defaults.router-timeout", msg: "want 1s to 10m",
		},
		{
			name: "duplicate key",
			yaml: "personas:\n  mid:\n    model-tier: worker\n    model-tier: expert\n",
			line: 4, key: "personas.mid.model-tier", msg: "duplicate key (first set at line 3)",
		},
		{
			name: "second document",
			yaml: "personas: {}\n---\npersonas: {}\n",
			line: 2, key: "", msg: "a second YAML document; want exactly one",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkErr(t, parseErr(t, tt.yaml), tt.line, tt.key, tt.msg)
		})
	}
}

func TestParseSyntaxErrorHasLine(t *testing.T) {
	t.Parallel()
	ce := parseErr(t, "personas:\n  senior:\n    model-tier: worker\n    description: a: b\n")
	if ce.File != userFile || ce.Line != 4 || ce.Key != "" {
		t.Errorf("syntax error at %s:%d key %q, want %s:4 (%v)", ce.File, ce.Line, ce.Key, userFile, ce)
	}
	if !strings.Contains(ce.Msg, "invalid YAML: mapping values are not allowed") {
		t.Errorf("Msg = %q, want invalid YAML: mapping values are not allowed", ce.Msg)
	}

	ce = parseErr(t, "personas:\n  senior:\n\tmodel-tier: worker\n")
	if ce.Line != 3 || !strings.Contains(ce.Msg, "invalid YAML") {
		t.Errorf("tab indentation: line %d, msg %q; want line 3, invalid YAML", ce.Line, ce.Msg)
	}
}

// A built-in workflow naming a persona the user disabled should be reported
// where the user can act on it, as the escalation chain is (at the
// persona's enabled line), not at a key of the built-in definitions that
// the user's file does not have.
func TestDisablingWorkflowPersonaPointsAtUserLine(t *testing.T) {
	t.Parallel()
	s, err := persona.Parse(userFile, []byte("personas:\n  reviewer:\n    enabled: false\n"))
	if err == nil {
		if _, ok := s.Workflow("design-review"); !ok {
			return // dropping the workflow would be fine too
		}
		t.Fatal("Parse accepted a disabled reviewer and kept design-review, which names it")
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *config.Error", err)
	}
	if ce.Line == 0 {
		t.Fatalf("disabling a persona a built-in workflow names fails at %q with no line (%v)", ce.Key, ce)
	}
	checkErr(t, ce, 3, "personas.reviewer.enabled", "design-review")
}

// Making a persona of the built-in chain internal should be reported at
// the line the user wrote (personas.NAME.internal), as disabling it is.
func TestInternalChainPersonaPointsAtUserLine(t *testing.T) {
	t.Parallel()
	ce := parseErr(t, "personas:\n  junior:\n    internal: true\n")
	if ce.Line == 0 {
		t.Fatalf("making a persona of the built-in escalation chain internal fails at %q with no line (%v)", ce.Key, ce)
	}
	checkErr(t, ce, 3, "personas.junior.internal", "escalation chain")
}

func TestEmptyFileIsBuiltIns(t *testing.T) {
	t.Parallel()
	for _, data := range []string{"", "# only a comment\n", "personas:\ntask-defaults:\n"} {
		s := mustParse(t, data)
		if s.File != userFile {
			t.Errorf("%q: File = %q, want %q", data, s.File, userFile)
		}
		if diff := cmp.Diff(persona.Defaults().List(), s.List()); diff != "" {
			t.Errorf("%q: personas differ from the built-ins (-want +got):\n%s", data, diff)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	t.Run("missing file", func(t *testing.T) {
		t.Parallel()
		s, err := persona.Load(filepath.Join(dir, "absent", "personas.yaml"))
		if err != nil {
			t.Fatalf("Load(missing) = %v, want nil", err)
		}
		if s.File != "" {
			t.Errorf("File = %q, want empty", s.File)
		}
		if diff := cmp.Diff(persona.Defaults().List(), s.List()); diff != "" {
			t.Errorf("personas differ from the built-ins (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(persona.Defaults().Defaults, s.Defaults); diff != "" {
			t.Errorf("task defaults differ (-want +got):\n%s", diff)
		}
	})

	t.Run("directory", func(t *testing.T) {
		t.Parallel()
		_, err := persona.Load(dir)
		var ce *config.Error
		if !errors.As(err, &ce) {
			t.Fatalf("Load(dir) = %v, want a *config.Error", err)
		}
		if ce.File != dir || !strings.HasPrefix(ce.Msg, "reading personas file: ") || ce.Err == nil {
			t.Errorf("Load(dir) error: file %q, msg %q, cause %v", ce.File, ce.Msg, ce.Err)
		}
		if strings.Count(ce.Error(), dir) != 1 {
			t.Errorf("error %q repeats the path", ce.Error())
		}
	})

	t.Run("file", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "personas.yaml")
		if err := os.WriteFile(path, []byte("personas:\n  mid:\n    model-tier: expert\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := persona.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if s.File != path || mustGet(t, s, "mid").Tier != llm.TierExpert {
			t.Errorf("Load: File %q, mid tier %s; want %q, expert", s.File, mustGet(t, s, "mid").Tier, path)
		}
	})

	t.Run("invalid file", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "personas.yaml")
		if err := os.WriteFile(path, []byte("task-defaults:\n  router-timeout: 0s\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := persona.Load(path)
		var ce *config.Error
		if !errors.As(err, &ce) || ce.File != path || ce.Line != 2 || ce.Key != "task-defaults.router-timeout" {
			t.Errorf("Load = %v, want %s:2 task-defaults.router-timeout", err, path)
		}
	})
}
