package extproc

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
)

// Changes finds the files of a worktree that a turn changed and no tool
// result named (a shell command's edits): a snapshot of the worktree is
// taken at each turn end and compared with the last one.
type Changes struct {
	dir   string
	log   *slog.Logger
	snap  git.Snapshot
	taken bool            // snap is usable
	named map[string]bool // files tool results named in this turn
}

// NewChanges tracks the changes in worktree dir; it reports none before
// Take.
func NewChanges(dir string, log *slog.Logger) *Changes { return &Changes{dir: dir, log: log} }

// Take snapshots the worktree: the changes are counted from now. When the
// snapshot fails, the last one stays.
func (c *Changes) Take(ctx context.Context) {
	if snap, err := git.TakeSnapshot(ctx, c.dir); err == nil {
		c.snap, c.taken = snap, true
	}
}

// Rel makes a path the CLI wrote relative to the worktree; "" when it is
// outside.
func (c *Changes) Rel(p string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(filepath.Clean(p))
	}
	rel, err := filepath.Rel(c.dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// Named notes a file a tool result named in this turn, so that Since does
// not report it again.
func (c *Changes) Named(path string) {
	if c.named == nil {
		c.named = map[string]bool{}
	}
	c.named[path] = true
}

// Since ends a turn: the files changed since the last turn end that no
// tool result named, as observations of turn.
func (c *Changes) Since(ctx context.Context, turn int) []event.Payload {
	named := c.named
	c.named = nil
	if !c.taken {
		return nil
	}
	after, err := c.snap.Retake(ctx)
	if err != nil {
		c.log.Warn("taking a snapshot of the worktree", "err", err)
		return nil
	}
	var evs []event.Payload
	for _, ch := range git.Diff(c.snap, after) {
		if !named[ch.Path] {
			evs = append(evs, event.FileChanged{Turn: turn, Path: ch.Path, Op: string(ch.Op), Tool: "bash"})
		}
	}
	c.snap = after
	return evs
}
