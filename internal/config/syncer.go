package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Syncer configures the Syncer, which relays what one running task learns to
// the others (docs/syncer.md).
type Syncer struct {
	Enabled      bool `yaml:"enabled"`       // relay learnings between running tasks; default true
	IntervalSecs int  `yaml:"interval_secs"` // the periodic sweep for late joiners and held messages; default 15, 1..3600

	// Relationships: which other running tasks count as related to a learning's source.
	SameParent bool `yaml:"same_parent"` // subtasks of the same parent; default true
	SharedTags bool `yaml:"shared_tags"` // tasks sharing a tag; default true
	SameFiles  bool `yaml:"same_files"`  // tasks that touched the same files or directories; default true
	SameGroup  bool `yaml:"same_group"`  // tasks with the same group:NAME tag; default true

	// Relay thresholds per urgency: always | related | same-parent | never.
	RelayBlocking string `yaml:"relay_blocking"` // default always
	RelayHelpful  string `yaml:"relay_helpful"`  // default related
	RelayFYI      string `yaml:"relay_fyi"`      // default same-parent

	// Delivery.
	MinRelevance   float64 `yaml:"min_relevance"`    // relevance score a recipient needs; default 0.15, 0..1
	MaxPerMinute   int     `yaml:"max_per_minute"`   // sync messages one task receives per minute; default 5, 1..1000
	CooldownSecs   int     `yaml:"cooldown_secs"`    // least time between two deliveries to one task (blocking ones excepted); default 10, 0..3600
	MaxPending     int     `yaml:"max_pending"`      // messages held for one task over its rate; default 20, 1..1000
	PendingTTLSecs int     `yaml:"pending_ttl_secs"` // a held message older than this is dropped; default 600, 10..86400

	// The syncer persona's judgement.
	Persona            bool `yaml:"persona"`              // ask the syncer persona who should hear a learning; default true (else the deterministic rules alone)
	PersonaTimeoutSecs int  `yaml:"persona_timeout_secs"` // default 20, 1..600

	// Extraction.
	LLMExtract         bool    `yaml:"llm_extract"`         // also ask the router tier for learnings at each turn end; default false
	ExtractErrors      bool    `yaml:"extract_errors"`      // an error later resolved on the same tool and target; default true
	ExtractDiscoveries bool    `yaml:"extract_discoveries"` // glob/grep results that answer a search; default true
	ExtractStatements  bool    `yaml:"extract_statements"`  // "found that", "turns out", "note:", "important:"; default true
	DedupSimilarity    float64 `yaml:"dedup_similarity"`    // two learnings this similar are one; default 0.8, 0.5..1
	Brief              int     `yaml:"brief"`               // learnings put into a new task's first context; default 3, 0..20 (0: off)
	MaxMessageChars    int     `yaml:"max_message_chars"`   // default 600, 100..4000
}

// relayThresholds lists the values supervision.syncer.relay_* accept, from
// the widest audience to none.
var relayThresholds = []string{"always", "related", "same-parent", "never"}

// DefaultSyncer returns the Syncer's defaults.
func DefaultSyncer() Syncer {
	return Syncer{Enabled: true, IntervalSecs: 15,
		SameParent: true, SharedTags: true, SameFiles: true, SameGroup: true,
		RelayBlocking: "always", RelayHelpful: "related", RelayFYI: "same-parent",
		MinRelevance: 0.15, MaxPerMinute: 5, CooldownSecs: 10, MaxPending: 20, PendingTTLSecs: 600,
		Persona: true, PersonaTimeoutSecs: 20,
		ExtractErrors: true, ExtractDiscoveries: true, ExtractStatements: true, DedupSimilarity: 0.8,
		Brief: 3, MaxMessageChars: 600}
}

// Interval returns how often the periodic sweep runs.
func (s Syncer) Interval() time.Duration { return time.Duration(s.IntervalSecs) * time.Second }

// Cooldown returns the least time between two deliveries to one task.
func (s Syncer) Cooldown() time.Duration { return time.Duration(s.CooldownSecs) * time.Second }

// PendingTTL returns how long a held message is kept before it is dropped.
func (s Syncer) PendingTTL() time.Duration { return time.Duration(s.PendingTTLSecs) * time.Second }

// PersonaTimeout returns the time limit of one syncer persona judgement.
func (s Syncer) PersonaTimeout() time.Duration {
	return time.Duration(s.PersonaTimeoutSecs) * time.Second
}

// Validate checks the Syncer's settings in declaration order. Keys are
// relative to the section; [Config.Validate] adds "supervision.syncer".
func (s Syncer) Validate() error {
	if err := checkRange("interval_secs", s.IntervalSecs, 1, 3600); err != nil {
		return err
	}
	for _, r := range []struct{ key, v string }{
		{"relay_blocking", s.RelayBlocking},
		{"relay_helpful", s.RelayHelpful},
		{"relay_fyi", s.RelayFYI},
	} {
		if !slices.Contains(relayThresholds, r.v) {
			return &Error{Key: r.key, Msg: fmt.Sprintf("want one of %s, got %q", strings.Join(relayThresholds, ", "), r.v)}
		}
	}
	if !(s.MinRelevance >= 0 && s.MinRelevance <= 1) {
		return &Error{Key: "min_relevance", Msg: fmt.Sprintf("want 0 to 1, got %g", s.MinRelevance)}
	}
	for _, r := range []struct {
		key       string
		n, lo, hi int
	}{
		{"max_per_minute", s.MaxPerMinute, 1, 1000},
		{"cooldown_secs", s.CooldownSecs, 0, 3600},
		{"max_pending", s.MaxPending, 1, 1000},
		{"pending_ttl_secs", s.PendingTTLSecs, 10, 86400},
		{"persona_timeout_secs", s.PersonaTimeoutSecs, 1, 600},
	} {
		if err := checkRange(r.key, r.n, r.lo, r.hi); err != nil {
			return err
		}
	}
	if !(s.DedupSimilarity >= 0.5 && s.DedupSimilarity <= 1) {
		return &Error{Key: "dedup_similarity", Msg: fmt.Sprintf("want 0.5 to 1, got %g", s.DedupSimilarity)}
	}
	if err := checkRange("brief", s.Brief, 0, 20); err != nil {
		return err
	}
	return checkRange("max_message_chars", s.MaxMessageChars, 100, 4000)
}
