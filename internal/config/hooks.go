package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Hook is one user command run at a decision point of the supervisors
// (docs/hooks.md): it gets the decision as JSON on stdin and may change or
// block it on stdout, where the point allows.
type Hook struct {
	On          string `yaml:"on"`           // the decision point: PersonaSelected, WatcherNudge, … (docs/hooks.md)
	Command     string `yaml:"command"`      // run with /bin/sh -c in the daemon's directory
	TimeoutSecs int    `yaml:"timeout_secs"` // the hook is killed after this long and the decision goes ahead; default 5, 1..300
}

// HookPoints lists the decision points hooks may be attached to.
func HookPoints() []string {
	return []string{
		"PersonaSelected", "PersonaEscalated", "PersonaPromptAssembly",
		"WatcherCheck", "WatcherNudge", "WatcherEscalate", "WatcherPause", "WatcherAbort",
		"SyncerEvaluate", "SyncerRelay", "SyncerDelivered", "SyncerIgnored",
	}
}

// Timeout returns how long the hook may run.
func (h Hook) Timeout() time.Duration {
	if h.TimeoutSecs <= 0 {
		return 5 * time.Second
	}
	return time.Duration(h.TimeoutSecs) * time.Second
}

// Validate implements Validator.
func (h Hook) Validate() error {
	switch {
	case !slices.Contains(HookPoints(), h.On):
		return &Error{Key: "on", Msg: fmt.Sprintf("%q is not a hook point; want one of %s", h.On, strings.Join(HookPoints(), ", "))}
	case strings.TrimSpace(h.Command) == "":
		return &Error{Key: "command", Msg: "must not be empty"}
	case h.TimeoutSecs < 0 || h.TimeoutSecs > 300:
		return &Error{Key: "timeout_secs", Msg: fmt.Sprintf("is %d; want 1..300 (0 means 5)", h.TimeoutSecs)}
	}
	return nil
}
