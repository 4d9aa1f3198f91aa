package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// lockingCommands take a repository lock (the index, a ref, the config, the
// worktree list) in at least one of their forms. Read-only forms (branch
// --list, stash list) are serialized too: harmless, and simpler than
// parsing every command's flags.
var lockingCommands = map[string]bool{
	"add": true, "am": true, "branch": true, "checkout": true, "cherry-pick": true,
	"clean": true, "commit": true, "config": true, "fetch": true, "gc": true,
	"merge": true, "mv": true, "pack-refs": true, "pull": true, "push": true,
	"rebase": true, "reset": true, "restore": true, "revert": true, "rm": true,
	"stash": true, "switch": true, "symbolic-ref": true, "tag": true,
	"update-index": true, "update-ref": true, "worktree": true, "notes": true,
	"remote": true, "read-tree": true, "apply": true, "reflog": true, "prune": true,
	"replace": true, "sparse-checkout": true, "submodule": true,
}

// takesLock reports whether git args run a command that takes a lock.
func takesLock(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || a == "-C" || a == "--git-dir" || a == "--work-tree":
			i++ // skip the option's value
		case strings.HasPrefix(a, "-"):
		default:
			return lockingCommands[a]
		}
	}
	return false
}

// sequencing reports whether git args run a command that leaves an
// operation in progress when it stops half way.
func sequencing(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || a == "-C" || a == "--git-dir" || a == "--work-tree":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a == "rebase" || a == "cherry-pick" || a == "revert" || a == "merge" || a == "am" || a == "pull"
		}
	}
	return false
}

// inProgress reports whether the work tree at dir has an operation in
// progress (a rebase, merge, cherry-pick, revert or am left half done).
func inProgress(ctx context.Context, dir string) bool {
	out, err := runOnce(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-dir")
	if err != nil {
		return false
	}
	gd := strings.TrimSpace(out)
	for _, f := range []string{"rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "sequencer"} {
		if _, err := os.Stat(filepath.Join(gd, f)); err == nil {
			return true
		}
	}
	return false
}

// Lock retries: a lock held by another process (the user's own git, an
// editor's) is usually released within milliseconds.
const lockRetries = 8

func lockBackoff(attempt int) time.Duration {
	return time.Duration(25<<min(attempt, 5)) * time.Millisecond // 25ms … 800ms, ≈3.5 s in all
}

// lockBusy reports whether err is git failing on a lock file another
// process holds.
func lockBusy(err error) bool {
	var gerr *Error
	if !errors.As(err, &gerr) {
		return false
	}
	s := gerr.Stderr
	return strings.Contains(s, ".lock': File exists") ||
		strings.Contains(s, ".lock': file exists") ||
		strings.Contains(s, "Another git process seems to be running")
}

// The per-repository locks, keyed by the repository's common git directory
// (shared by all its worktrees).
var (
	keysMu sync.Mutex
	keys   = map[string]string{} // dir → common dir
	locks  = map[string]chan struct{}{}
)

// lockKey returns the common git directory of the repository dir is in,
// or "" when there is none (git will fail on its own).
func lockKey(ctx context.Context, dir string) string {
	keysMu.Lock()
	k, ok := keys[dir]
	keysMu.Unlock()
	if ok {
		return k
	}
	out, err := runOnce(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return ""
	}
	k = filepath.Clean(strings.TrimSpace(out))
	keysMu.Lock()
	if len(keys) > 4096 { // bounded: worktrees come and go
		clear(keys)
	}
	keys[dir] = k
	keysMu.Unlock()
	return k
}

// acquire takes the lock of key, or fails when ctx ends first.
func acquire(ctx context.Context, key string) (func(), error) {
	keysMu.Lock()
	ch := locks[key]
	if ch == nil {
		ch = make(chan struct{}, 1)
		locks[key] = ch
	}
	keysMu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type heldKey struct{ key string }

// holds reports whether ctx carries the lock of key (taken by Locked).
func holds(ctx context.Context, key string) bool {
	v, _ := ctx.Value(heldKey{key}).(bool)
	return v
}

// Locked runs fn holding the in-process lock of the repository dir is in,
// so that a sequence of commands (check, then update a ref) is not
// interleaved with another of the daemon's. Git commands run with the ctx
// fn receives do not take the lock again.
func Locked(ctx context.Context, dir string, fn func(ctx context.Context) error) error {
	key := lockKey(ctx, dir)
	if key == "" || holds(ctx, key) {
		return fn(ctx)
	}
	unlock, err := acquire(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	return fn(context.WithValue(ctx, heldKey{key}, true))
}
