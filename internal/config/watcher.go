package config

import (
	"fmt"
	"time"
)

// Watcher configures the Watcher, which catches running tasks that are
// stuck or spending without progress and nudges, escalates, pauses or
// aborts them (docs/watcher.md).
type Watcher struct {
	Enabled      bool `yaml:"enabled"`       // supervise running tasks; default true
	IntervalSecs int  `yaml:"interval_secs"` // how often the clock checks run; default 5, 1..3600

	// Tier-1 thresholds.
	WindowSteps    int     `yaml:"window_steps"`     // steps kept per task; default 40, 10..1000
	GraceSteps     int     `yaml:"grace_steps"`      // steps after a start or resume before the time and spend checks apply; default 3, 0..1000
	Repeat         int     `yaml:"repeat"`           // the same call and result in a row; default 4, 2..100
	Failing        int     `yaml:"failing"`          // the same call failing in a row; default 3, 2..100
	Monologue      int     `yaml:"monologue"`        // the same message in a row; default 3, 2..100
	Alternation    int     `yaml:"alternation"`      // results of an A-B-A-B alternation; default 6, 4..100
	Dense          int     `yaml:"dense"`            // more than this many identical pairs among the last dense_of; default 5, 2..100
	DenseOf        int     `yaml:"dense_of"`         // default 10, 3..200; more than dense
	ContextErrors  int     `yaml:"context_errors"`   // context-window overflows without progress; default 3, 1..100
	EmptyReplies   int     `yaml:"empty_replies"`    // default 3, 1..100
	Apologies      int     `yaml:"apologies"`        // default 3, 1..100
	NoProgressSecs int     `yaml:"no_progress_secs"` // default 600, 10..86400
	RunawayTokens  int64   `yaml:"runaway_tokens"`   // tokens since the last progress; default 300000, at least 1000
	RunawayUSD     float64 `yaml:"runaway_usd"`      // cost since the last progress; default 3, more than 0
	Wandering      int     `yaml:"wandering"`        // tool results without a file change before tier 2 is asked; default 30, 5..10000
	WanderingAct   int     `yaml:"wandering_act"`    // ... before the finding asks tier 2 to confirm acting; default 60, at least wandering, at most 10000
	Persist        int     `yaml:"persist"`          // the same call in a row, its result moving only in noise; default 8, 3..100
	SameFailure    int     `yaml:"same_failure"`     // the same failure, any calls, edits between; default 5, 2..100
	Talk           int     `yaml:"talk"`             // turns in a row without a tool call; default 5, 2..100
	ModelErrors    int     `yaml:"model_errors"`     // failed model calls and pauses for them with no answer; default 4, 1..100
	Reask          int     `yaml:"reask"`            // times the same question is put to the user; default 3, 2..100
	Circles        int     `yaml:"circles"`          // file changes in a row back to earlier states, nothing new between; default 4, 2..100
	Similarity     float64 `yaml:"similarity"`       // near-duplicate threshold for masked results; default 0.9, 0.5..1
	Loose          float64 `yaml:"loose"`            // how alike persist's fully masked results must be; default 0.7, 0.5..1

	// Tier 2: the watcher persona's judgement.
	Tier2            bool `yaml:"tier2"`              // ask the watcher persona when tier 1 finds something; default true
	Tier2EverySecs   int  `yaml:"tier2_every_secs"`   // also judge a long-running task this often; default 900, 0 (never) or 60..86400
	Tier2TimeoutSecs int  `yaml:"tier2_timeout_secs"` // default 30, 1..600

	// The ladder.
	Nudges      int     `yaml:"nudges"`        // unheeded nudges (hint, warning, critical) before the next rung; default 3, 1..10
	StepsToHeed int     `yaml:"steps_to_heed"` // tool results after a nudge is delivered before it counts as unheeded; default 3, 1..100
	Escalate    bool    `yaml:"escalate"`      // escalate the persona after the nudges; default true
	Pause       bool    `yaml:"pause"`         // pause the task after that; default true
	Abort       bool    `yaml:"abort"`         // abort (cancel) instead of pausing; default false
	HardTokens  int64   `yaml:"hard_tokens"`   // tokens since progress that abort a task still flagged; default 0 (off)
	HardUSD     float64 `yaml:"hard_usd"`      // cost since progress that aborts; default 0 (off)
}

// DefaultWatcher returns the Watcher's defaults.
func DefaultWatcher() Watcher {
	return Watcher{Enabled: true, IntervalSecs: 5,
		WindowSteps: 40, GraceSteps: 3, Repeat: 4, Failing: 3, Monologue: 3, Alternation: 6, Dense: 5, DenseOf: 10,
		ContextErrors: 3, EmptyReplies: 3, Apologies: 3, NoProgressSecs: 600, RunawayTokens: 300_000, RunawayUSD: 3,
		Wandering: 30, WanderingAct: 60, Persist: 8, SameFailure: 5, Talk: 5, ModelErrors: 4, Reask: 3, Circles: 4,
		Similarity: 0.9, Loose: 0.7,
		Tier2: true, Tier2EverySecs: 900, Tier2TimeoutSecs: 30,
		Nudges: 3, StepsToHeed: 3, Escalate: true, Pause: true}
}

// Interval returns how often the clock checks run.
func (w Watcher) Interval() time.Duration { return time.Duration(w.IntervalSecs) * time.Second }

// Validate checks the Watcher's settings in declaration order. Keys are
// relative to the section.
func (w Watcher) Validate() error {
	for _, r := range []struct {
		key       string
		n, lo, hi int
	}{
		{"interval_secs", w.IntervalSecs, 1, 3600},
		{"window_steps", w.WindowSteps, 10, 1000},
		{"grace_steps", w.GraceSteps, 0, 1000},
		{"repeat", w.Repeat, 2, 100},
		{"failing", w.Failing, 2, 100},
		{"monologue", w.Monologue, 2, 100},
		{"alternation", w.Alternation, 4, 100},
		{"dense", w.Dense, 2, 100},
		{"dense_of", w.DenseOf, 3, 200},
		{"context_errors", w.ContextErrors, 1, 100},
		{"empty_replies", w.EmptyReplies, 1, 100},
		{"apologies", w.Apologies, 1, 100},
		{"no_progress_secs", w.NoProgressSecs, 10, 86400},
		{"wandering", w.Wandering, 5, 10000},
		{"wandering_act", w.WanderingAct, w.Wandering, 10000},
		{"persist", w.Persist, 3, 100},
		{"same_failure", w.SameFailure, 2, 100},
		{"talk", w.Talk, 2, 100},
		{"model_errors", w.ModelErrors, 1, 100},
		{"reask", w.Reask, 2, 100},
		{"circles", w.Circles, 2, 100},
	} {
		if err := checkRange(r.key, r.n, r.lo, r.hi); err != nil {
			return err
		}
	}
	switch {
	case w.DenseOf <= w.Dense:
		return &Error{Key: "dense_of", Msg: fmt.Sprintf("want more than dense (%d), got %d", w.Dense, w.DenseOf)}
	case w.RunawayTokens < 1000:
		return &Error{Key: "runaway_tokens", Msg: fmt.Sprintf("want at least 1000, got %d", w.RunawayTokens)}
	case !(w.RunawayUSD > 0):
		return &Error{Key: "runaway_usd", Msg: fmt.Sprintf("want more than 0, got %g", w.RunawayUSD)}
	case !(w.Similarity >= 0.5 && w.Similarity <= 1):
		return &Error{Key: "similarity", Msg: fmt.Sprintf("want 0.5 to 1, got %g", w.Similarity)}
	case !(w.Loose >= 0.5 && w.Loose <= 1):
		return &Error{Key: "loose", Msg: fmt.Sprintf("want 0.5 to 1, got %g", w.Loose)}
	case w.Tier2EverySecs != 0 && (w.Tier2EverySecs < 60 || w.Tier2EverySecs > 86400):
		return &Error{Key: "tier2_every_secs", Msg: fmt.Sprintf("want 0 (never) or 60 to 86400, got %d", w.Tier2EverySecs)}
	}
	for _, r := range []struct {
		key       string
		n, lo, hi int
	}{
		{"tier2_timeout_secs", w.Tier2TimeoutSecs, 1, 600},
		{"nudges", w.Nudges, 1, 10},
		{"steps_to_heed", w.StepsToHeed, 1, 100},
	} {
		if err := checkRange(r.key, r.n, r.lo, r.hi); err != nil {
			return err
		}
	}
	if w.HardTokens < 0 {
		return &Error{Key: "hard_tokens", Msg: fmt.Sprintf("want 0 (off) or more, got %d", w.HardTokens)}
	}
	if w.HardUSD < 0 {
		return &Error{Key: "hard_usd", Msg: fmt.Sprintf("want 0 (off) or more, got %g", w.HardUSD)}
	}
	return nil
}
