package merge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// A batch's gate runs once on the chain's last commit. When it fails, the
// chain is split in two: the first half is gated on the target, the second
// on what of the first passed, and so on down to single entries, so that a
// bad entry is found in about log2(n) more runs and sent back alone while
// the good ones land. The commit that lands has always passed the gate.
//
// The gate needs a work tree, and the tasks' worktrees hold their branches,
// not the chain: it runs in a detached worktree of the queue's own under
// <git-common-dir>/neuraphage/gate/<target>, checked out at the commit to
// gate (tracked files forced to it, untracked ones removed; ignored files,
// build caches say, are kept between runs). Nothing of the user's or of a
// task's is ever there.

// bisect gates tip, the chain of ms's undecided members built on base, and
// returns the last commit of the part of it that passed: tip when the gate
// passed, else what bisecting kept (base when nothing passed). A member
// found failing alone gets its gate outcome. target is the target's commit
// the batch started from (see build).
func (q *Queue) bisect(ctx context.Context, repo, target, base string, ms []*member, env []string, tip string) (string, error) {
	var in []*member
	for _, m := range ms {
		if m.inChain() {
			in = append(in, m)
		}
	}
	if len(in) == 0 || tip == base {
		return base, nil
	}
	g, err := q.gateCommit(ctx, repo, in[0].e.Target, tip, in[0].env)
	if err != nil {
		return "", err
	}
	if g == nil {
		return tip, nil
	}
	if len(in) == 1 {
		in[0].out = &outcome{gate: g, detail: fmt.Sprintf("the gate `%s` failed (exit %d): %s", q.cfg.Gate, g.exit, lastLines(g.output, 3))}
		in[0].commit = ""
		q.log.Info("batch gate failed on one entry", "task_id", in[0].e.TaskID, "exit", g.exit)
		return base, nil
	}
	q.log.Info("batch gate failed; bisecting", "entries", len(in), "exit", g.exit)
	left, right := in[:len(in)/2], in[len(in)/2:]
	lt, err := q.build(ctx, repo, target, base, left, env)
	if err != nil {
		return "", err
	}
	if lt, err = q.bisect(ctx, repo, target, base, left, env, lt); err != nil {
		return "", err
	}
	rt, err := q.build(ctx, repo, target, lt, right, env)
	if err != nil {
		return "", err
	}
	return q.bisect(ctx, repo, target, lt, right, env, rt)
}

// gateCommit runs the gate on commit in the queue's gate worktree for
// target.
func (q *Queue) gateCommit(ctx context.Context, repo, target, commit string, env []string) (*gateFailure, error) {
	dir, err := q.gateTree(ctx, repo, target, commit)
	if err != nil {
		return nil, fmt.Errorf("preparing the gate's work tree: %w", err)
	}
	return q.gate(ctx, dir, env)
}

// gateTree returns the queue's gate worktree for target in repo, checked
// out at commit, making it when it is missing.
func (q *Queue) gateTree(ctx context.Context, repo, target, commit string) (string, error) {
	common, err := git.Run(ctx, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(target))
	dir := filepath.Join(strings.TrimSpace(common), "neuraphage", "gate", hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		_, err := git.Run(ctx, dir, "checkout", "-q", "--detach", "--force", commit)
		if err == nil {
			_, err = git.Run(ctx, dir, "clean", "-q", "-ffd")
		}
		if err == nil {
			return dir, nil
		}
		q.log.Warn("the gate's work tree is made again", "dir", dir, "err", err)
	}
	// The directory is the queue's alone: made again from scratch.
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	if _, err := git.Run(ctx, repo, "worktree", "add", "-q", "--force", "--detach", dir, commit); err != nil {
		return "", err
	}
	return dir, nil
}
