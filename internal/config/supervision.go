package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Supervision configures the supervisors that watch running tasks.
type Supervision struct {
	MainWatcher MainWatcher `yaml:"main_watcher"`
	Watcher     Watcher     `yaml:"watcher"`
	Syncer      Syncer      `yaml:"syncer"`
	Sessions    Sessions    `yaml:"sessions"`
	Overlap     Overlap     `yaml:"overlap"`
}

// Overlap configures the overlap radar, which tells two running tasks
// that changed the same files of each other (docs/overlap.md).
type Overlap struct {
	Enabled bool `yaml:"enabled"` // tell both tasks of a pair that changed the same files; default true (a task created with --no-overlap-notices is never told)
}

// MainWatcher configures the main-branch watcher, which tells running tasks
// to rebase when the branch they will merge into moves.
type MainWatcher struct {
	Enabled             bool   `yaml:"enabled"`              // tell tasks whose branch fell behind main; default true
	IntervalSecs        int    `yaml:"interval_secs"`        // polling fallback and fetch interval; default 30, 1..86400
	MainBranch          string `yaml:"main_branch"`          // branch compared against; "" means each task's base branch (worktree.base, or the repository's default); a valid branch name
	NotificationUrgency string `yaml:"notification_urgency"` // fyi | helpful | blocking; default helpful
	CooldownSecs        int    `yaml:"cooldown_secs"`        // least time between two notices to one task; default 60, 0..86400
	Fetch               bool   `yaml:"fetch"`                // with a remote, fetch <remote>/<main> every interval (offline: skipped with one warning); default true
	Remote              string `yaml:"remote"`               // remote whose copy of main is watched too; default "origin"; "" watches the local branch only; a valid remote name (no spaces, no "/", not starting with "-")
	NotifyUnrelated     bool   `yaml:"notify_unrelated"`     // also tell tasks none of whose files main changed (an fyi note); default true
	OnConflict          string `yaml:"on_conflict"`          // after a blocking rebase conflicts (and is undone): notify (tell the task the files) | pause (also pause it for its user); default notify
}

// urgencies lists the values supervision.main_watcher.notification_urgency
// accepts, least pressing first.
var urgencies = []string{"fyi", "helpful", "blocking"}

// conflictActions lists the values supervision.main_watcher.on_conflict
// accepts.
var conflictActions = []string{"notify", "pause"}

// Interval returns how often the watcher polls and fetches.
func (m MainWatcher) Interval() time.Duration {
	return time.Duration(m.IntervalSecs) * time.Second
}

// Cooldown returns the least time between two notices to one task.
func (m MainWatcher) Cooldown() time.Duration {
	return time.Duration(m.CooldownSecs) * time.Second
}

// Validate checks the main watcher settings, in declaration order. Keys are
// relative to the section; [Config.Validate] adds "supervision.main_watcher".
func (m MainWatcher) Validate() error {
	if err := checkRange("interval_secs", m.IntervalSecs, 1, 86400); err != nil {
		return err
	}
	if err := checkGitName("main_branch", m.MainBranch); err != nil {
		return err
	}
	if !slices.Contains(urgencies, m.NotificationUrgency) {
		return &Error{Key: "notification_urgency", Msg: fmt.Sprintf("want one of %s, got %q", strings.Join(urgencies, ", "), m.NotificationUrgency)}
	}
	if err := checkRange("cooldown_secs", m.CooldownSecs, 0, 86400); err != nil {
		return err
	}
	if err := checkGitName("remote", m.Remote); err != nil {
		return err
	}
	if strings.Contains(m.Remote, "/") {
		// <remote>/<main> would be ambiguous.
		return &Error{Key: "remote", Msg: fmt.Sprintf("want a remote name without /, or \"\" for the local branch only, got %q", m.Remote)}
	}
	if !slices.Contains(conflictActions, m.OnConflict) {
		return &Error{Key: "on_conflict", Msg: fmt.Sprintf("want one of %s, got %q", strings.Join(conflictActions, ", "), m.OnConflict)}
	}
	return nil
}
