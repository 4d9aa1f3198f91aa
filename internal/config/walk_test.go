package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The types below stand in for sections that other packages will add: they
// check that the loader and validation handle shapes Config does not use yet
// without any code of their own.

type wideRoot struct {
	LLM    wideLLM        `yaml:"llm"`
	Tags   []string       `yaml:"tags"`
	Ratio  float64        `yaml:"ratio"`
	Wait   time.Duration  `yaml:"wait"`
	Count  uint16         `yaml:"count"`
	Hooks  []wideHook     `yaml:"hooks"`
	Limits map[string]int `yaml:"limits"`
	Opt    *wideHook      `yaml:"opt"`
	Skip   string         `yaml:"-"`
	Inline wideInline     `yaml:",inline"`
}

type wideInline struct {
	Flat string `yaml:"flat"`
}

type wideLLM struct {
	Tiers   map[string]wideTier `yaml:"tiers"`
	Watcher struct {
		IntervalSecs int `yaml:"interval_secs"`
	} `yaml:"watcher"`
}

type wideTier struct {
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
}

type wideHook struct {
	Command string `yaml:"command"`
	Timeout int    `yaml:"timeout"`
}

// Validate reports tiers without a provider, the way a section defined in
// another package would: with its own FieldError type and errors.Join.
func (l wideLLM) Validate() error {
	var errs []error
	names := make([]string, 0, len(l.Tiers))
	for name := range l.Tiers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if l.Tiers[name].Provider == "" {
			errs = append(errs, fmt.Errorf("checking tiers: %w", tierError{key: "tiers." + name + ".provider", msg: "must not be empty"}))
		}
	}
	if l.Watcher.IntervalSecs < 0 {
		errs = append(errs, errors.New("watcher interval must not be negative"))
	}
	return errors.Join(errs...)
}

// Validate rejects hooks without a command; it has a pointer receiver.
func (h *wideHook) Validate() error {
	if h.Command == "" {
		return &Error{Key: "command", Msg: "must not be empty"}
	}
	return nil
}

type tierError struct{ key, msg string }

func (e tierError) Error() string                  { return e.key + ": " + e.msg }
func (e tierError) ConfigField() (key, msg string) { return e.key, e.msg }

func wideDefault() wideRoot {
	return wideRoot{
		LLM:    wideLLM{Tiers: map[string]wideTier{"worker": {Provider: "anthropic", Model: "small"}}},
		Tags:   []string{"default"},
		Ratio:  0.5,
		Wait:   time.Second,
		Limits: map[string]int{"a": 1},
	}
}

func loadWide(t *testing.T, yaml string) (wideRoot, error) {
	t.Helper()
	r := wideDefault()
	_, err := decodeFile("w.yaml", []byte(yaml), reflect.ValueOf(&r).Elem(), func() error {
		return validateFields(reflect.ValueOf(r), "")
	})
	return r, err
}

func TestWalkerGeneric(t *testing.T) {
	t.Parallel()
	got, err := loadWide(t, `
llm:
  tiers:
    worker: {model: big}
    judge: {provider: openai, model: o}
  watcher:
    interval_secs: 5
tags: [a, b]
ratio: 2
wait: 90s
count: 7
hooks:
  - command: make
    timeout: 3
  - {command: lint}
limits: {b: 2}
opt: {command: x}
flat: yes
`)
	if err != nil {
		t.Fatalf("decoding: %v", err)
	}
	want := wideRoot{
		LLM: wideLLM{Tiers: map[string]wideTier{
			"worker": {Provider: "anthropic", Model: "big"}, // map entries merge into defaults
			"judge":  {Provider: "openai", Model: "o"},
		}},
		Tags:   []string{"a", "b"},
		Ratio:  2,
		Wait:   90 * time.Second,
		Count:  7,
		Hooks:  []wideHook{{Command: "make", Timeout: 3}, {Command: "lint"}},
		Limits: map[string]int{"a": 1, "b": 2},
		Opt:    &wideHook{Command: "x"},
		Inline: wideInline{Flat: "yes"},
	}
	want.LLM.Watcher.IntervalSecs = 5
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded mismatch (-want +got):\n%s", diff)
	}
}

func TestWalkerGenericErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		line       int
		key, msg   string
	}{
		{"unknown key in a map value", "llm:\n  tiers:\n    worker:\n      modle: x\n", 4, "llm.tiers.worker.modle",
			`unknown key; did you mean "model"?; valid keys in llm.tiers.worker: provider, model`},
		{"unknown key in a list element", "hooks:\n  - command: a\n  - comand: b\n", 3, "hooks.1.comand",
			`unknown key; did you mean "command"?; valid keys in hooks.1: command, timeout`},
		{"wrong type in a list", "tags: [a, [b]]\n", 1, "tags.1", "want a string, got a list"},
		{"wrong type in a map", "limits:\n  a: lots\n", 2, "limits.a", `want an integer, got "lots"`},
		{"bad duration", "wait: soon\n", 1, "wait", `want a duration such as "30s", got "soon"`},
		{"negative unsigned", "count: -1\n", 1, "count", "want a non-negative integer, got -1 (out of range)"},
		{"number wanted", "ratio: fast\n", 1, "ratio", `want a number, got "fast"`},
		{"ignored field is unknown", "skip: x\n", 1, "skip", "unknown key; valid keys at the top level: llm, tags, ratio, wait, count, hooks, limits, opt, flat"},
		{"section error with FieldError in a join", "llm:\n  tiers:\n    judge:\n      model: m\n", 3, "llm.tiers.judge.provider", "must not be empty"},
		{"section error without FieldError", "llm:\n  watcher:\n    interval_secs: -1\n", 1, "llm", "watcher interval must not be negative"},
		{"pointer-receiver validator in a list", "hooks:\n  - timeout: 1\n", 2, "hooks.0.command", "must not be empty"},
		{"alias to a list of the wrong type", "tags: &x {a: 1}\n", 1, "tags", "want a list, got a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadWide(t, tt.yaml)
			ce := asError(t, err)
			got := Error{File: ce.File, Line: ce.Line, Key: ce.Key, Msg: ce.Msg}
			want := Error{File: "w.yaml", Line: tt.line, Key: tt.key, Msg: tt.msg}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error %q mismatch (-want +got):\n%s", err, diff)
			}
		})
	}
}

func TestValidateSectionErrorKeepsCause(t *testing.T) {
	t.Parallel()
	r := wideDefault()
	r.LLM.Tiers["worker"] = wideTier{}
	err := validateFields(reflect.ValueOf(r), "")
	var te tierError
	if !errors.As(err, &te) {
		t.Fatalf("error %v does not wrap the section's own error", err)
	}
	if ce := asError(t, err); ce.File != "" || ce.Line != 0 || ce.Key != "llm.tiers.worker.provider" {
		t.Errorf("error = %+v, want key llm.tiers.worker.provider without file or line", ce)
	}
}

func TestAliasBomb(t *testing.T) {
	t.Parallel()
	// Nine levels of ten aliases each expand to 10^9 strings; the decoder must
	// give up instead of walking them.
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 8; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.Repeat(p+", ", 9)+p)
	}
	var deep struct {
		A0 []string
		A1 [][]string
		A2 [][][]string
		A3 [][][][]string
		A4 [][][][][]string
		A5 [][][][][][]string
		A6 [][][][][][][]string
		A7 [][][][][][][][]string
		A8 [][][][][][][][][]string
	}
	_, err := decodeFile("bomb.yaml", []byte(b.String()), reflect.ValueOf(&deep).Elem(), func() error { return nil })
	if ce := asError(t, err); !strings.Contains(ce.Msg, "too large") {
		t.Errorf("alias bomb error = %v, want a size error", err)
	}
}

// TestWalkerEmptyCollections checks that an empty list or mapping leaves an
// empty default as it is (nil stays nil, so Marshal's [] and {} load back
// unchanged) and that an empty list still replaces a non-empty default.
func TestWalkerEmptyCollections(t *testing.T) {
	t.Parallel()
	var zero wideRoot
	if _, err := decodeFile("w.yaml", []byte("tags: []\nhooks: []\nlimits: {}\nllm: {tiers: {}}\n"), reflect.ValueOf(&zero).Elem(), func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if zero.Tags != nil || zero.Hooks != nil || zero.Limits != nil || zero.LLM.Tiers != nil {
		t.Errorf("empty collections over nil defaults = %#v, want them all nil", zero)
	}
	got, err := loadWide(t, "tags: []\nlimits: {}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got.Tags == nil || len(got.Tags) != 0 {
		t.Errorf("tags: [] over a non-empty default = %#v, want an empty list", got.Tags)
	}
	if diff := cmp.Diff(map[string]int{"a": 1}, got.Limits); diff != "" {
		t.Errorf("limits: {} over a default merges nothing (-want +got):\n%s", diff)
	}
}
