package config

import "time"

// Sessions configures watcher sessions (`neuraphage watch`): reviewers
// that follow tasks' activity and interject. The sessions themselves are
// stored, not configured; these are how they run.
type Sessions struct {
	Enabled             bool `yaml:"enabled"`               // run watcher sessions; default true
	SettleSecs          int  `yaml:"settle_secs"`           // evaluate activity this long after it began when no breakpoint (turn end, files changed) came; default 20, 1..3600
	MinIntervalSecs     int  `yaml:"min_interval_secs"`     // least time between two evaluations of one session (its rate limit); default 5, 0..3600
	EvaluateTimeoutSecs int  `yaml:"evaluate_timeout_secs"` // one evaluation's model call; default 60, 1..600
	MaxTokens           int  `yaml:"max_tokens"`            // the evaluation reply's cap; default 800, 64..8000
}

// DefaultSessions returns the watcher sessions' defaults.
func DefaultSessions() Sessions {
	return Sessions{Enabled: true, SettleSecs: 20, MinIntervalSecs: 5, EvaluateTimeoutSecs: 60, MaxTokens: 800}
}

// Settle returns SettleSecs as a duration.
func (s Sessions) Settle() time.Duration { return time.Duration(s.SettleSecs) * time.Second }

// MinInterval returns MinIntervalSecs as a duration.
func (s Sessions) MinInterval() time.Duration { return time.Duration(s.MinIntervalSecs) * time.Second }

// EvaluateTimeout returns EvaluateTimeoutSecs as a duration.
func (s Sessions) EvaluateTimeout() time.Duration {
	return time.Duration(s.EvaluateTimeoutSecs) * time.Second
}

// Validate checks the settings. Keys are relative to the section;
// [Config.Validate] adds "supervision.sessions".
func (s Sessions) Validate() error {
	for _, r := range []struct {
		key       string
		n, lo, hi int
	}{
		{"settle_secs", s.SettleSecs, 1, 3600},
		{"min_interval_secs", s.MinIntervalSecs, 0, 3600},
		{"evaluate_timeout_secs", s.EvaluateTimeoutSecs, 1, 600},
		{"max_tokens", s.MaxTokens, 64, 8000},
	} {
		if err := checkRange(r.key, r.n, r.lo, r.hi); err != nil {
			return err
		}
	}
	return nil
}
