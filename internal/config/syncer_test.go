package config

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSyncerDefaults(t *testing.T) {
	t.Parallel()
	want := Syncer{
		Enabled:            true,
		IntervalSecs:       15,
		SameParent:         true,
		SharedTags:         true,
		SameFiles:          true,
		SameGroup:          true,
		RelayBlocking:      "always",
		RelayHelpful:       "related",
		RelayFYI:           "same-parent",
		MinRelevance:       0.15,
		MaxPerMinute:       5,
		CooldownSecs:       10,
		MaxPending:         20,
		PendingTTLSecs:     600,
		Persona:            true,
		PersonaTimeoutSecs: 20,
		LLMExtract:         false,
		ExtractErrors:      true,
		ExtractDiscoveries: true,
		ExtractStatements:  true,
		DedupSimilarity:    0.8,
		Brief:              3,
		MaxMessageChars:    600,
	}
	if diff := cmp.Diff(want, DefaultSyncer()); diff != "" {
		t.Errorf("DefaultSyncer mismatch (-want +got):\n%s", diff)
	}
	c := Default()
	if diff := cmp.Diff(want, c.Supervision.Syncer); diff != "" {
		t.Errorf("Default().Supervision.Syncer mismatch (-want +got):\n%s", diff)
	}
	if err := DefaultSyncer().Validate(); err != nil {
		t.Errorf("DefaultSyncer().Validate() = %v", err)
	}
	for key, want := range map[string]string{
		"supervision.syncer.enabled":              "true",
		"supervision.syncer.interval_secs":        "15",
		"supervision.syncer.same_parent":          "true",
		"supervision.syncer.shared_tags":          "true",
		"supervision.syncer.same_files":           "true",
		"supervision.syncer.same_group":           "true",
		"supervision.syncer.relay_blocking":       "always",
		"supervision.syncer.relay_helpful":        "related",
		"supervision.syncer.relay_fyi":            "same-parent",
		"supervision.syncer.min_relevance":        "0.15",
		"supervision.syncer.max_per_minute":       "5",
		"supervision.syncer.cooldown_secs":        "10",
		"supervision.syncer.max_pending":          "20",
		"supervision.syncer.pending_ttl_secs":     "600",
		"supervision.syncer.persona":              "true",
		"supervision.syncer.persona_timeout_secs": "20",
		"supervision.syncer.llm_extract":          "false",
		"supervision.syncer.extract_errors":       "true",
		"supervision.syncer.extract_discoveries":  "true",
		"supervision.syncer.extract_statements":   "true",
		"supervision.syncer.dedup_similarity":     "0.8",
		"supervision.syncer.brief":                "3",
		"supervision.syncer.max_message_chars":    "600",
	} {
		if got, err := Get(c, key); err != nil || got != want {
			t.Errorf("Get(Default(), %q) = %q, %v; want %q", key, got, err, want)
		}
	}
	s := c.Supervision.Syncer
	if s.Interval() != 15*time.Second || s.Cooldown() != 10*time.Second ||
		s.PendingTTL() != 10*time.Minute || s.PersonaTimeout() != 20*time.Second {
		t.Errorf("Interval, Cooldown, PendingTTL, PersonaTimeout = %v, %v, %v, %v; want 15s, 10s, 10m, 20s",
			s.Interval(), s.Cooldown(), s.PendingTTL(), s.PersonaTimeout())
	}
	if z := (Syncer{}); z.Interval() != 0 || z.Cooldown() != 0 || z.PendingTTL() != 0 || z.PersonaTimeout() != 0 {
		t.Errorf("zero durations = %v, %v, %v, %v; want 0", z.Interval(), z.Cooldown(), z.PendingTTL(), z.PersonaTimeout())
	}
}

// TestSyncerRanges checks every integer range at its bounds: one below the
// lowest and one above the highest are refused, naming the full key; the
// bounds themselves are accepted.
func TestSyncerRanges(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		key    string
		field  func(*Syncer) *int
		lo, hi int
	}{
		{"interval_secs", func(s *Syncer) *int { return &s.IntervalSecs }, 1, 3600},
		{"max_per_minute", func(s *Syncer) *int { return &s.MaxPerMinute }, 1, 1000},
		{"cooldown_secs", func(s *Syncer) *int { return &s.CooldownSecs }, 0, 3600},
		{"max_pending", func(s *Syncer) *int { return &s.MaxPending }, 1, 1000},
		{"pending_ttl_secs", func(s *Syncer) *int { return &s.PendingTTLSecs }, 10, 86400},
		{"persona_timeout_secs", func(s *Syncer) *int { return &s.PersonaTimeoutSecs }, 1, 600},
		{"brief", func(s *Syncer) *int { return &s.Brief }, 0, 20},
		{"max_message_chars", func(s *Syncer) *int { return &s.MaxMessageChars }, 100, 4000},
	} {
		for _, tt := range []struct {
			n  int
			ok bool
		}{{r.lo - 1, false}, {r.lo, true}, {r.lo + 1, true}, {r.hi - 1, true}, {r.hi, true}, {r.hi + 1, false}} {
			c := Default()
			*r.field(&c.Supervision.Syncer) = tt.n
			err := c.Validate()
			if tt.ok {
				if err != nil {
					t.Errorf("%s = %d: Validate = %v, want nil", r.key, tt.n, err)
				}
				continue
			}
			ce := asError(t, err)
			want := Error{Key: "supervision.syncer." + r.key, Msg: fmt.Sprintf("want %d to %d, got %d", r.lo, r.hi, tt.n)}
			if diff := cmp.Diff(want, Error{File: ce.File, Line: ce.Line, Key: ce.Key, Msg: ce.Msg}); diff != "" {
				t.Errorf("%s = %d: Validate error mismatch (-want +got):\n%s", r.key, tt.n, diff)
			}
		}
	}
}

func TestSyncerValidate(t *testing.T) {
	t.Parallel()
	const relayMsg = "want one of always, related, same-parent, never, got "
	tests := []struct {
		name   string
		modify func(*Syncer)
		key    string // relative to supervision.syncer; "" for a valid configuration
		msg    string
	}{
		{"unknown blocking relay", func(s *Syncer) { s.RelayBlocking = "sometimes" }, "relay_blocking", relayMsg + `"sometimes"`},
		{"empty blocking relay", func(s *Syncer) { s.RelayBlocking = "" }, "relay_blocking", relayMsg + `""`},
		{"unknown helpful relay", func(s *Syncer) { s.RelayHelpful = "same_parent" }, "relay_helpful", relayMsg + `"same_parent"`},
		{"relay is case-sensitive", func(s *Syncer) { s.RelayHelpful = "Related" }, "relay_helpful", relayMsg + `"Related"`},
		{"unknown fyi relay", func(s *Syncer) { s.RelayFYI = "parent" }, "relay_fyi", relayMsg + `"parent"`},
		{"relay with spaces", func(s *Syncer) { s.RelayFYI = " never" }, "relay_fyi", relayMsg + `" never"`},
		{"every relay value", func(s *Syncer) { s.RelayBlocking, s.RelayHelpful, s.RelayFYI = "never", "always", "related" }, "", ""},
		{"relay same-parent", func(s *Syncer) { s.RelayBlocking = "same-parent" }, "", ""},

		{"relevance below 0", func(s *Syncer) { s.MinRelevance = -0.01 }, "min_relevance", "want 0 to 1, got -0.01"},
		{"relevance 0", func(s *Syncer) { s.MinRelevance = 0 }, "", ""},
		{"relevance 1", func(s *Syncer) { s.MinRelevance = 1 }, "", ""},
		{"relevance above 1", func(s *Syncer) { s.MinRelevance = 1.01 }, "min_relevance", "want 0 to 1, got 1.01"},
		{"relevance NaN", func(s *Syncer) { s.MinRelevance = math.NaN() }, "min_relevance", "want 0 to 1, got NaN"},

		{"dedup below 0.5", func(s *Syncer) { s.DedupSimilarity = 0.49 }, "dedup_similarity", "want 0.5 to 1, got 0.49"},
		{"dedup 0.5", func(s *Syncer) { s.DedupSimilarity = 0.5 }, "", ""},
		{"dedup 1", func(s *Syncer) { s.DedupSimilarity = 1 }, "", ""},
		{"dedup above 1", func(s *Syncer) { s.DedupSimilarity = 1.01 }, "dedup_similarity", "want 0.5 to 1, got 1.01"},
		{"dedup NaN", func(s *Syncer) { s.DedupSimilarity = math.NaN() }, "dedup_similarity", "want 0.5 to 1, got NaN"},

		{"disabled is still checked", func(s *Syncer) { s.Enabled, s.IntervalSecs = false, 0 }, "interval_secs", "want 1 to 3600, got 0"},
		{"first problem in declaration order", func(s *Syncer) { s.MaxMessageChars, s.RelayFYI = 0, "x" }, "relay_fyi", relayMsg + `"x"`},
		{"low edges", func(s *Syncer) {
			*s = Syncer{IntervalSecs: 1, RelayBlocking: "never", RelayHelpful: "never", RelayFYI: "never", MinRelevance: 0,
				MaxPerMinute: 1, CooldownSecs: 0, MaxPending: 1, PendingTTLSecs: 10, PersonaTimeoutSecs: 1,
				DedupSimilarity: 0.5, Brief: 0, MaxMessageChars: 100}
		}, "", ""},
		{"high edges", func(s *Syncer) {
			*s = Syncer{Enabled: true, IntervalSecs: 3600, SameParent: true, SharedTags: true, SameFiles: true, SameGroup: true,
				RelayBlocking: "always", RelayHelpful: "always", RelayFYI: "always", MinRelevance: 1,
				MaxPerMinute: 1000, CooldownSecs: 3600, MaxPending: 1000, PendingTTLSecs: 86400, Persona: true, PersonaTimeoutSecs: 600,
				LLMExtract: true, ExtractErrors: true, ExtractDiscoveries: true, ExtractStatements: true,
				DedupSimilarity: 1, Brief: 20, MaxMessageChars: 4000}
		}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The section alone, with keys relative to it.
			s := DefaultSyncer()
			tt.modify(&s)
			err := s.Validate()
			if tt.key == "" {
				if err != nil {
					t.Fatalf("Syncer.Validate = %v, want nil", err)
				}
			} else {
				ce := asError(t, err)
				if diff := cmp.Diff(Error{Key: tt.key, Msg: tt.msg}, *ce); diff != "" {
					t.Errorf("Syncer.Validate error %q mismatch (-want +got):\n%s", err, diff)
				}
			}
			// The whole configuration, with the full dotted key.
			c := Default()
			tt.modify(&c.Supervision.Syncer)
			err = c.Validate()
			if tt.key == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			ce := asError(t, err)
			got := Error{File: ce.File, Line: ce.Line, Key: ce.Key, Msg: ce.Msg}
			if diff := cmp.Diff(Error{Key: "supervision.syncer." + tt.key, Msg: tt.msg}, got); diff != "" {
				t.Errorf("Validate error %q mismatch (-want +got):\n%s", err, diff)
			}
		})
	}
}

func TestSyncerLoad(t *testing.T) {
	t.Parallel()
	got, err := Load(writeTemp(t, `# quieter sync
supervision:
  syncer:
    relay_helpful: same-parent   # only siblings
    relay_fyi: never
    max_per_minute: 2
    llm_extract: true
`))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Default()
	want.Supervision.Syncer.RelayHelpful = "same-parent"
	want.Supervision.Syncer.RelayFYI = "never"
	want.Supervision.Syncer.MaxPerMinute = 2
	want.Supervision.Syncer.LLMExtract = true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load mismatch (-want +got):\n%s", diff)
	}

	// Empty sections, and a bare key, keep the defaults.
	for _, yaml := range []string{"supervision:\n  syncer:\n", "supervision:\n  syncer:\n    relay_fyi:\n"} {
		if c, err := Load(writeTemp(t, yaml)); err != nil || c.Supervision != Default().Supervision {
			t.Errorf("Load(%q) = %+v, %v; want the default supervision", yaml, c.Supervision, err)
		}
	}
}

func TestSyncerLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		line int
		key  string
		msg  string
	}{
		{
			name: "unknown relay", yaml: "supervision:\n  syncer:\n    enabled: true\n    relay_helpful: siblings\n",
			line: 4, key: "supervision.syncer.relay_helpful", msg: `want one of always, related, same-parent, never, got "siblings"`,
		},
		{
			name: "relay in a flow mapping", yaml: "# c\nsupervision:\n  syncer: {relay_blocking: sometimes}\n",
			line: 3, key: "supervision.syncer.relay_blocking", msg: `want one of always, related, same-parent, never, got "sometimes"`,
		},
		{
			name: "interval out of range", yaml: "supervision:\n  syncer:\n    interval_secs: 3601\n",
			line: 3, key: "supervision.syncer.interval_secs", msg: "want 1 to 3600, got 3601",
		},
		{
			name: "relevance out of range", yaml: "supervision:\n  watcher:\n    enabled: true\n  syncer:\n    brief: 2\n    min_relevance: 1.5\n",
			line: 6, key: "supervision.syncer.min_relevance", msg: "want 0 to 1, got 1.5",
		},
		{
			name: "dedup out of range", yaml: "supervision:\n  syncer:\n    dedup_similarity: 0.2\n",
			line: 3, key: "supervision.syncer.dedup_similarity", msg: "want 0.5 to 1, got 0.2",
		},
		{
			name: "wrong type", yaml: "supervision:\n  syncer:\n    persona: sometimes\n",
			line: 3, key: "supervision.syncer.persona", msg: `want true or false, got "sometimes"`,
		},
		{
			name: "float brief", yaml: "supervision:\n  syncer:\n    brief: 2.5\n",
			line: 3, key: "supervision.syncer.brief", msg: "want an integer, got 2.5",
		},
		{
			name: "syncer is a mapping", yaml: "supervision:\n  syncer: off\n",
			line: 2, key: "supervision.syncer", msg: `want a mapping, got "off"`,
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
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d: %s: ", path, tt.line, tt.key)) {
				t.Errorf("Error() = %q, want it to start with the file, line and key", err)
			}
		})
	}

	// A misspelt key is reported with the section's valid keys.
	path := writeTemp(t, "supervision:\n  syncer:\n    relay_fy: never\n")
	_, err := Load(path)
	ce := asError(t, err)
	if ce.File != path || ce.Line != 3 || ce.Key != "supervision.syncer.relay_fy" ||
		!strings.HasPrefix(ce.Msg, `unknown key; did you mean "relay_fyi"?`) {
		t.Errorf("Load = %+v, want the file, line 3, the key and a suggestion", ce)
	}
}

func TestSyncerSet(t *testing.T) {
	t.Parallel()
	path := writeTemp(t, commented)
	for _, kv := range [][2]string{
		{"supervision.syncer.relay_fyi", "never"},
		{"supervision.syncer.enabled", "false"},
		{"supervision.syncer.interval_secs", "60"},
		{"supervision.syncer.min_relevance", "0.3"},
		{"supervision.syncer.cooldown_secs", "0"},
		{"supervision.syncer.persona", "no"},
		{"supervision.syncer.brief", "0"},
	} {
		if err := Set(path, kv[0], kv[1]); err != nil {
			t.Fatalf("Set(%q, %q): %v", kv[0], kv[1], err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantFile := commented + `supervision:
  syncer:
    relay_fyi: never
    enabled: false
    interval_secs: 60
    min_relevance: 0.3
    cooldown_secs: 0
    persona: false
    brief: 0
`
	if diff := cmp.Diff(wantFile, string(data)); diff != "" {
		t.Errorf("file after Set mismatch (-want +got):\n%s", diff)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load after Set: %v", err)
	}
	want := DefaultSyncer()
	want.RelayFYI, want.Enabled, want.IntervalSecs, want.MinRelevance = "never", false, 60, 0.3
	want.CooldownSecs, want.Persona, want.Brief = 0, false, 0
	if diff := cmp.Diff(want, c.Supervision.Syncer); diff != "" {
		t.Errorf("syncer after Set mismatch (-want +got):\n%s", diff)
	}
}

func TestSyncerSetRejects(t *testing.T) {
	t.Parallel()
	const synced = "supervision:\n  syncer:\n    enabled: true # on\n"
	tests := []struct {
		name, key, value string
		wantKey, wantMsg string
	}{
		{"unknown relay", "supervision.syncer.relay_blocking", "urgent",
			"supervision.syncer.relay_blocking", `want one of always, related, same-parent, never, got "urgent"`},
		{"empty relay", "supervision.syncer.relay_helpful", "",
			"supervision.syncer.relay_helpful", `want one of always, related, same-parent, never, got ""`},
		{"interval out of range", "supervision.syncer.interval_secs", "0",
			"supervision.syncer.interval_secs", "want 1 to 3600, got 0"},
		{"relevance out of range", "supervision.syncer.min_relevance", "2",
			"supervision.syncer.min_relevance", "want 0 to 1, got 2"},
		{"brief not an integer", "supervision.syncer.brief", "three",
			"supervision.syncer.brief", `want an integer, got "three"`},
		{"misspelt key", "supervision.syncer.relay_fy", "never",
			"supervision.syncer.relay_fy", `unknown key; did you mean "supervision.syncer.relay_fyi"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeTemp(t, synced)
			err := Set(path, tt.key, tt.value)
			ce := asError(t, err)
			got := Error{File: ce.File, Line: ce.Line, Key: ce.Key, Msg: ce.Msg}
			if diff := cmp.Diff(Error{Key: tt.wantKey, Msg: tt.wantMsg}, got); diff != "" {
				t.Errorf("Set error %q mismatch (-want +got):\n%s", err, diff)
			}
			if after, _ := os.ReadFile(path); string(after) != synced {
				t.Errorf("Set changed the file despite the error:\n%s", after)
			}
		})
	}
}
