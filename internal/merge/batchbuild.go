package merge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// build makes the chain of ms's undecided members on base and returns its
// last commit (base when none is in it). target is the target's commit the
// batch started from: a conflict with it is the entry's own (sent back); a
// conflict with a chain that grew from it defers the entry.
func (q *Queue) build(ctx context.Context, repo, target, base string, ms []*member, env []string) (string, error) {
	chain := base
	chainTree := ""
	for _, m := range ms {
		if m.ready != nil {
			select {
			case <-m.ready:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		if m.bad || m.out != nil || m.deferred || m.closed || m.badBuild {
			continue
		}
		m.commit, m.already = "", false
		cs := m.cs
		if m.csBase != base {
			var err error
			if cs, err = git.RangeCommits(ctx, repo, base, m.tip); err != nil {
				return "", err
			}
		}
		if len(cs) == 0 {
			m.already = base == target
			m.deferred = !m.already
			continue
		}
		commit, files, err := q.replay(ctx, repo, chain, &chainTree, m, cs, env)
		switch {
		case errors.Is(err, errHalfWay):
			m.badBuild = true
			continue
		case err != nil:
			return "", err
		case files != nil && chain == target:
			m.out = &outcome{conflict: true, files: files, base: chain, detail: conflictDetail(m.e.Target, chain, files)}
			continue
		case files != nil:
			// A conflict with the chain: with the target itself too (then
			// it is the entry's own), or only with an earlier entry.
			r, err := git.MergeTree(ctx, repo, target, m.tip)
			if err != nil {
				return "", err
			}
			if !r.Clean {
				m.out = &outcome{conflict: true, files: r.Conflicts, base: target, detail: conflictDetail(m.e.Target, target, r.Conflicts)}
			} else {
				m.deferred = true
			}
			continue
		case commit == chain:
			// Every commit of its branch is on the target already.
			m.already = chain == target
			m.deferred = !m.already
			continue
		}
		m.commit, chain = commit, commit
	}
	return chain, nil
}

// replay brings m's branch (commits cs, oldest first) up to chain and
// returns the commit it lands as, or the conflicting files. chainTree
// caches chain's tree ("" until read) and is left at the new commit's.
func (q *Queue) replay(ctx context.Context, repo, chain string, chainTree *string, m *member, cs []git.RangeCommit, env []string) (string, []string, error) {
	merges := false
	for _, c := range cs {
		merges = merges || len(c.Parents) > 1
	}
	if q.cfg.Strategy != Rebase || merges {
		r, err := git.MergeTree(ctx, repo, chain, m.tip)
		if err != nil || !r.Clean {
			return "", r.Conflicts, err
		}
		var parents []string
		var msg string
		switch {
		case q.cfg.Strategy == Rebase:
			// A branch that merged the target already is merged again, as
			// the one-at-a-time path does in its worktree.
			parents, msg = []string{m.tip, chain}, fmt.Sprintf("Merge branch '%s' into %s\n", m.e.Target, m.e.Branch)
		case q.cfg.Strategy == Merge:
			parents, msg = []string{chain, m.tip}, fmt.Sprintf("Merge branch '%s': %s\n\nNeuraphage-Task: %s\n", m.e.Branch, summaryOf(m.t), m.t.ID)
		default:
			parents, msg = []string{chain}, fmt.Sprintf("%s\n\nNeuraphage-Task: %s\n", summaryOf(m.t), m.t.ID)
		}
		c, err := git.CommitTree(ctx, repo, env, r.Tree, parents, msg)
		if err == nil {
			*chainTree = r.Tree
		}
		return c, nil, err
	}
	// Rebase: each commit's tree is the chain merged with the branch up to
	// that commit (the merge base is where the branch left the target, so
	// this is the rebase's result at that commit); a commit that changes
	// nothing on top of the chain is dropped, as git rebase drops it.
	if *chainTree == "" {
		t, err := git.Run(ctx, repo, "rev-parse", "--verify", "--end-of-options", chain+"^{tree}")
		if err != nil {
			return "", nil, err
		}
		*chainTree = strings.TrimSpace(t)
	}
	prev, prevTree := chain, *chainTree
	for i, c := range cs {
		r, err := git.MergeTree(ctx, repo, chain, c.ID)
		if err != nil {
			return "", nil, err
		}
		if !r.Clean {
			if i == len(cs)-1 {
				return "", r.Conflicts, nil
			}
			return "", nil, errHalfWay
		}
		if r.Tree == prevTree {
			continue
		}
		if prev, err = git.CommitTree(ctx, repo, append(slices.Clip(env), c.AuthorEnv()...), r.Tree, []string{prev}, c.Message); err != nil {
			return "", nil, err
		}
		prevTree = r.Tree
	}
	*chainTree = prevTree
	return prev, nil, nil
}
