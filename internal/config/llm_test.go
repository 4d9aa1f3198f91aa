package config

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// The tests below check that the llm section, defined in internal/llm, works
// through the loader, Validate, Get and Set with no code of its own here.

func TestLLMLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		line       int
		key, msg   string
		llmCause   bool // the cause is the section's own *llm.ConfigError
	}{
		{
			name: "typo in a tier", yaml: "llm:\n  tiers:\n    worker:\n      modle: claude-sonnet-4-5\n",
			line: 4, key: "llm.tiers.worker.modle",
			msg: `unknown key; did you mean "model"?; valid keys in llm.tiers.worker: provider, model`,
		},
		{
			name: "typo in a section name", yaml: "log: {level: info}\nllm:\n  rety:\n    max_attempts: 3\n",
			line: 3, key: "llm.rety",
			msg: `unknown key; did you mean "retry"?; valid keys in llm: providers, tiers, retry, stream_idle_timeout_secs, models`,
		},
		{
			name: "typo in a catalogue entry", yaml: "llm:\n  models:\n    - name: m\n      provider: openai\n      context: 8000\n",
			line: 5, key: "llm.models.0.context",
			msg: `unknown key; did you mean "context_window"?; valid keys in llm.models.0: name, provider, context_window, input_per_mtok, output_per_mtok, cache_write_per_mtok, cache_read_per_mtok`,
		},
		{
			name: "wrong type", yaml: "llm:\n  retry:\n    max_attempts: many\n",
			line: 3, key: "llm.retry.max_attempts", msg: `want an integer, got "many"`,
		},
		{
			name: "mapping for the catalogue list", yaml: "llm:\n  models: {name: m}\n",
			line: 2, key: "llm.models", msg: "want a list, got a mapping",
		},
		{
			name: "unknown provider for a tier", yaml: "# tiers\nllm:\n  tiers:\n    router: {provider: openai}\n    worker:\n      model: x\n      provider: foo\n",
			line: 7, key: "llm.tiers.worker.provider", llmCause: true,
			msg: `unknown provider "foo" (want one of ["anthropic" "openai" "gemini"])`,
		},
		{
			name: "key absent from the file is reported at its nearest ancestor", yaml: "llm:\n  tiers:\n    expert:\n      model: gpt-5\n",
			line: 3, key: "llm.tiers.expert.provider", llmCause: true,
			msg: `must be set when model "gpt-5" is set`,
		},
		{
			name: "invalid value in a list element", yaml: "llm:\n  models:\n    - name: a\n      provider: openai\n    - name: b\n      provider: bedrock\n",
			line: 6, key: "llm.models.1.provider", llmCause: true,
			msg: `unknown provider "bedrock" (want one of ["anthropic" "openai" "gemini"])`,
		},
		{
			name: "invalid URL", yaml: "llm:\n  providers:\n    openai:\n      base_url: localhost:11434\n",
			line: 4, key: "llm.providers.openai.base_url", llmCause: true,
			msg: `"localhost:11434" is not an http or https URL`,
		},
		{
			name: "first of several problems", yaml: "llm:\n  retry:\n    max_attempts: -1\n  stream_idle_timeout_secs: -2\n",
			line: 3, key: "llm.retry.max_attempts", llmCause: true,
			msg: "must not be negative, got -1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeTemp(t, tt.yaml)
			_, err := Load(path)
			ce := asError(t, err)
			got := Error{File: ce.File, Line: ce.Line, Key: ce.Key, Msg: ce.Msg}
			want := Error{File: path, Line: tt.line, Key: tt.key, Msg: tt.msg}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load error %q mismatch (-want +got):\n%s", err, diff)
			}
			var le *llm.ConfigError
			if errors.As(err, &le) != tt.llmCause {
				t.Errorf("errors.As(%q, *llm.ConfigError) = %v, want %v", err, !tt.llmCause, tt.llmCause)
			}
		})
	}
}

func TestLLMSet(t *testing.T) {
	t.Parallel()
	path := writeTemp(t, commented)
	if err := Set(path, "llm.tiers.worker.provider", "anthropic"); err != nil {
		t.Fatalf("Set provider: %v", err)
	}
	if err := Set(path, "llm.tiers.worker.model", "claude-sonnet-4-5"); err != nil {
		t.Fatalf("Set model: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantFile := commented + "llm:\n  tiers:\n    worker:\n      provider: anthropic\n      model: claude-sonnet-4-5\n"
	if diff := cmp.Diff(wantFile, string(data)); diff != "" {
		t.Errorf("file after Set mismatch (-want +got):\n%s", diff)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatalf("Load after Set: %v", err)
	}
	want, err := Load(writeTemp(t, commented))
	if err != nil {
		t.Fatal(err)
	}
	want.LLM.Tiers.Worker = llm.TierConfig{Provider: "anthropic", Model: "claude-sonnet-4-5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load after Set mismatch (-want +got):\n%s", diff)
	}
	if v, err := Get(got, "llm.tiers.worker.model"); err != nil || v != "claude-sonnet-4-5" {
		t.Errorf("Get(llm.tiers.worker.model) = %q, %v; want claude-sonnet-4-5", v, err)
	}
}

func TestLLMSetEditsAFlowMapping(t *testing.T) {
	t.Parallel()
	path := writeTemp(t, "llm:\n  tiers:\n    worker: {provider: anthropic, model: claude-haiku-4-5}\n")
	if err := Set(path, "llm.tiers.worker.model", "claude-sonnet-4-5"); err != nil {
		t.Fatalf("Set: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "llm:\n  tiers:\n    worker: {provider: anthropic, model: claude-sonnet-4-5}\n"; string(data) != want {
		t.Errorf("file after Set = %q, want %q", data, want)
	}
}

func TestLLMSetRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, before, key, value string
		wantKey, wantMsg         string
	}{
		{
			// The section's own rule: a model needs a provider. The error
			// names the key to set first.
			name: "model without provider", before: commented,
			key: "llm.tiers.worker.model", value: "claude-sonnet-4-5",
			wantKey: "llm.tiers.worker.provider", wantMsg: `must be set when model "claude-sonnet-4-5" is set`,
		},
		{
			name: "unknown provider", before: commented,
			key: "llm.tiers.router.provider", value: "bedrock",
			wantKey: "llm.tiers.router.provider", wantMsg: `unknown provider "bedrock" (want one of ["anthropic" "openai" "gemini"])`,
		},
		{
			name: "negative limit", before: "llm:\n  providers:\n    openai: {max_concurrent: 2}\n",
			key: "llm.providers.openai.max_concurrent", value: "-1",
			wantKey: "llm.providers.openai.max_concurrent", wantMsg: "must not be negative, got -1",
		},
		{
			name: "typo", before: commented,
			key: "llm.tiers.worker.modle", value: "x",
			wantKey: "llm.tiers.worker.modle", wantMsg: `unknown key; did you mean "llm.tiers.worker.model"?`,
		},
		{
			name: "section", before: commented,
			key: "llm.tiers", value: "x",
			wantKey: "llm.tiers",
			wantMsg: "is a section, not a setting; set one of: llm.tiers.router.provider, llm.tiers.router.model, " +
				"llm.tiers.worker.provider, llm.tiers.worker.model, llm.tiers.expert.provider, llm.tiers.expert.model",
		},
		{
			name: "inside a list of sections", before: "llm:\n  models:\n    - {name: m, provider: openai}\n",
			key: "llm.models.0.context_window", value: "8000",
			wantKey: "llm.models.0.context_window", wantMsg: "is inside llm.models, which cannot be set from the command line; edit the file",
		},
		{
			name: "list of sections", before: commented,
			key: "llm.models", value: "x",
			wantKey: "llm.models", wantMsg: "cannot be set from the command line; edit the file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeTemp(t, tt.before)
			err := Set(path, tt.key, tt.value)
			ce := asError(t, err)
			got := Error{File: ce.File, Line: ce.Line, Key: ce.Key, Msg: ce.Msg}
			want := Error{Key: tt.wantKey, Msg: tt.wantMsg}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Set error %q mismatch (-want +got):\n%s", err, diff)
			}
			if after, _ := os.ReadFile(path); string(after) != tt.before {
				t.Errorf("Set changed the file despite the error:\n%s", after)
			}
		})
	}
}

func TestLLMGet(t *testing.T) {
	t.Parallel()
	c, err := Load(writeTemp(t, `llm:
  tiers:
    worker: {provider: anthropic, model: claude-sonnet-4-5}
  models:
    - {name: llama3.2, provider: openai, context_window: 128000}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key, want string
	}{
		{"llm.tiers", strings.Join([]string{
			"router:",
			`  provider: ""`,
			`  model: ""`,
			"worker:",
			"  provider: anthropic",
			"  model: claude-sonnet-4-5",
			"expert:",
			`  provider: ""`,
			`  model: ""`,
		}, "\n")},
		{"llm.tiers.worker", "provider: anthropic\nmodel: claude-sonnet-4-5"},
		{"llm.tiers.worker.model", "claude-sonnet-4-5"},
		{"llm.tiers.router.provider", `""`},
		{"llm.stream_idle_timeout_secs", "90"},
		{"llm.models.0.name", "llama3.2"},
		{"llm.models.0.context_window", "128000"},
	}
	for _, tt := range tests {
		got, err := Get(c, tt.key)
		if err != nil {
			t.Errorf("Get(%q): %v", tt.key, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Get(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	for key, msg := range map[string]string{
		"llm.tiers.wroker": `unknown key; did you mean "llm.tiers.worker" or "llm.tiers.router"?`,
		"llm.models.1":     "unknown key; did you mean",
	} {
		_, err := Get(c, key)
		if ce := asError(t, err); ce.Key != key || !strings.HasPrefix(ce.Msg, msg) {
			t.Errorf("Get(%q) error = %q, want key %q and a message starting %q", key, err, key, msg)
		}
	}
}
