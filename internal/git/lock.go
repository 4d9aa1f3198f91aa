package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// What git serializes, and so what the runner serializes within the
// process (tested with many concurrent commands on real repositories):
//
//   - A work tree's index and HEAD: two commands writing the same index
//     fail on index.lock. Commands that write a work tree's index (add,
//     commit, checkout, rebase, reset, ...) hold that work tree's lock.
//   - A ref: git locks each ref it updates (<ref>.lock) and a compare-and-
//     swap on one ref is atomic. Commands that only update refs (update-ref,
//     branch, tag) and the commands above share the repository: different
//     refs and different work trees never wait for one another.
//   - The list of worktrees: `git worktree add` reads every other
//     worktree's administrative directory, and one half written by a
//     concurrent add makes it die ("failed to read .../commondir"),
//     leaving its new branch behind; so may the other commands that read
//     every worktree's HEAD (checkout, switch and rebase of a branch,
//     branch, the worktree commands). An add holds the list alone, those
//     hold it shared (a read-only one holds nothing else); `worktree list`
//     and `worktree remove`, which die before doing anything, are run again
//     instead, so that a removal deleting a large work tree does not hold
//     adds up. Other commands do not touch it. (The worktree package
//     makes a new task's worktree without git's add: its administrative
//     directory appears whole, by one rename, and needs no lock.)
//   - The commands that rewrite the repository as a whole (fetch, gc,
//     pack-refs, prune, config and remote writes, worktree
//     prune/move/repair) hold the repository alone.
//   - Read-only commands (rev-parse, symbolic-ref and config reads,
//     for-each-ref, merge-base, cat-file, log, status with
//     GIT_OPTIONAL_LOCKS=0, ...) take no lock.
//
// The repository lock is first come, first served: a command that needs
// the repository alone waits for the running ones, and the ones arriving
// after it wait for it, so none starves.

// scope is what a git command needs serialized.
type scope int

const (
	scopeNone     scope = iota // read-only
	scopeShared                // refs: the repository, shared
	scopeWorkTree              // the index and HEAD of its work tree, the repository shared
	scopeRepo                  // the repository alone
)

// workTreeCommands write the index (or HEAD) of the work tree they run in.
var workTreeCommands = map[string]bool{
	"add": true, "am": true, "apply": true, "checkout": true, "cherry-pick": true,
	"clean": true, "commit": true, "merge": true, "mv": true, "read-tree": true,
	"rebase": true, "reset": true, "restore": true, "revert": true, "rm": true,
	"sparse-checkout": true, "stash": true, "switch": true, "update-index": true,
}

// sharedCommands update refs or one worktree's own administrative files.
var sharedCommands = map[string]bool{
	"branch": true, "notes": true, "replace": true, "symbolic-ref": true,
	"tag": true, "update-ref": true, "worktree": true,
}

// repoCommands rewrite the repository as a whole (many refs, packs, the
// config) or the list of worktrees.
var repoCommands = map[string]bool{
	"config": true, "fetch": true, "gc": true, "pack-refs": true, "prune": true,
	"pull": true, "push": true, "reflog": true, "remote": true, "repack": true,
	"submodule": true,
}

// command splits git args into the command and its own arguments, skipping
// git's global options.
func command(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || a == "-C" || a == "--git-dir" || a == "--work-tree":
			i++ // skip the option's value
		case strings.HasPrefix(a, "-"):
		default:
			return a, args[i+1:]
		}
	}
	return "", nil
}

// operands returns rest without its options.
func operands(rest []string) []string {
	var out []string
	for i, a := range rest {
		if a == "--" {
			return append(out, rest[i+1:]...)
		}
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

func hasAny(rest []string, opts ...string) bool {
	for _, a := range rest {
		for _, o := range opts {
			if a == o {
				return true
			}
		}
	}
	return false
}

// scopeOf returns what git args need serialized.
func scopeOf(args []string) scope {
	cmd, rest := command(args)
	ops := operands(rest)
	sub := ""
	if len(ops) > 0 {
		sub = ops[0]
	}
	switch cmd {
	case "symbolic-ref":
		if len(ops) == 1 && !hasAny(rest, "-d", "--delete") {
			return scopeNone // reads the ref
		}
	case "config":
		if hasAny(rest, "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color", "--get-colorbool") {
			return scopeNone
		}
	case "branch":
		if hasAny(rest, "--show-current", "--list", "-l") || (len(ops) == 0 && !hasAny(rest, "--unset-upstream", "--edit-description")) {
			return scopeNone
		}
	case "tag":
		if hasAny(rest, "--list", "-l") || len(ops) == 0 {
			return scopeNone
		}
	case "stash":
		if sub == "list" || sub == "show" {
			return scopeNone
		}
	case "worktree":
		switch sub {
		case "list":
			return scopeNone
		case "prune", "move", "repair":
			return scopeRepo
		}
		return scopeShared
	case "remote":
		if sub == "" || sub == "show" || sub == "get-url" {
			return scopeNone
		}
	case "reflog":
		if sub == "" || sub == "show" || sub == "exists" {
			return scopeNone
		}
	case "notes":
		if sub == "" || sub == "list" || sub == "show" {
			return scopeNone
		}
	}
	switch {
	case workTreeCommands[cmd]:
		return scopeWorkTree
	case sharedCommands[cmd]:
		return scopeShared
	case repoCommands[cmd]:
		return scopeRepo
	}
	return scopeNone
}

// How a command uses the list of worktrees.
const (
	listNone   = iota
	listShared // reads every worktree's HEAD
	listAlone  // adds a worktree
)

// listUse returns how git args use the list of worktrees.
func listUse(args []string) int {
	cmd, rest := command(args)
	switch cmd {
	case "worktree":
		ops := operands(rest)
		switch {
		case len(ops) > 0 && ops[0] == "add":
			return listAlone
		case len(ops) > 0 && (ops[0] == "list" || ops[0] == "remove"):
			// They read the list first and die on a half-made worktree
			// before doing anything: retried (halfMadeRead) rather than
			// held up behind adds, a removal for the whole time it deletes.
			return listNone
		}
		return listShared
	case "branch", "checkout", "switch", "rebase":
		return listShared
	}
	return listNone
}

// takesLock reports whether git args run a command that takes a lock (a
// read of every worktree's HEAD included).
func takesLock(args []string) bool { return scopeOf(args) != scopeNone || listUse(args) != listNone }

// sequencing reports whether git args run a command that leaves an
// operation in progress when it stops half way.
func sequencing(args []string) bool {
	switch cmd, _ := command(args); cmd {
	case "rebase", "cherry-pick", "revert", "merge", "am", "pull":
		return true
	}
	return false
}

// inProgress reports whether the work tree at dir has an operation in
// progress (a rebase, merge, cherry-pick, revert or am left half done).
func inProgress(ctx context.Context, dir string) bool {
	d, err := locate(ctx, dir)
	if err != nil {
		return false
	}
	for _, f := range []string{"rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "sequencer"} {
		if _, err := os.Stat(filepath.Join(d.Own, f)); err == nil {
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

// halfMadeRead reports whether err is git dying, while it reads the list of
// worktrees, on one another process's `git worktree add` has half made
// ("failed to read .git/worktrees/<name>/commondir") or another `git
// worktree remove` is deleting ("Invalid path '.git/worktrees/<name>'"):
// nothing was done, and a moment later the worktree is whole or gone.
func halfMadeRead(err error) bool {
	var gerr *Error
	if !errors.As(err, &gerr) {
		return false
	}
	s := gerr.Stderr
	return (strings.Contains(s, "failed to read") || strings.Contains(s, "Invalid path")) && strings.Contains(s, "worktrees")
}

// exclusive is the weight of the repository lock held alone.
const exclusive = 1 << 30

// The in-process locks: one per repository (by common git directory),
// shared or alone, and one per work tree (by its own git directory), each
// dropped when nobody holds or waits for it.
var (
	locksMu   sync.Mutex
	repoLocks = map[string]*lockEntry[*semaphore.Weighted]{}
	treeLocks = map[string]*lockEntry[chan struct{}]{}
)

type lockEntry[T any] struct {
	l     T
	users int
}

func use[T any](m map[string]*lockEntry[T], key string, make func() T) T {
	locksMu.Lock()
	defer locksMu.Unlock()
	e := m[key]
	if e == nil {
		e = &lockEntry[T]{l: make()}
		m[key] = e
	}
	e.users++
	return e.l
}

func done[T any](m map[string]*lockEntry[T], key string) {
	locksMu.Lock()
	defer locksMu.Unlock()
	if e := m[key]; e != nil {
		if e.users--; e.users == 0 {
			delete(m, key)
		}
	}
}

// acquireRepo takes the lock of the repository whose common git directory
// is key, shared or alone, or fails when ctx ends first.
func acquireRepo(ctx context.Context, key string, alone bool) (func(), error) {
	sem := use(repoLocks, key, func() *semaphore.Weighted { return semaphore.NewWeighted(exclusive) })
	n := int64(1)
	if alone {
		n = exclusive
	}
	if err := sem.Acquire(ctx, n); err != nil {
		done(repoLocks, key)
		return nil, err
	}
	return func() { sem.Release(n); done(repoLocks, key) }, nil
}

// acquireList takes the lock of the list of worktrees of the repository
// whose common git directory is key, shared or alone.
func acquireList(ctx context.Context, key string, alone bool) (func(), error) {
	return acquireRepo(ctx, key+"\x00worktrees", alone)
}

// acquireTree takes the lock of the work tree whose git directory is key.
func acquireTree(ctx context.Context, key string) (func(), error) {
	ch := use(treeLocks, key, func() chan struct{} { return make(chan struct{}, 1) })
	select {
	case ch <- struct{}{}:
		return func() { <-ch; done(treeLocks, key) }, nil
	case <-ctx.Done():
		done(treeLocks, key)
		return nil, ctx.Err()
	}
}

// lockFor takes what git args in dir need serialized. It returns the
// release (nil when nothing was taken).
func lockFor(ctx context.Context, dir string, args []string) (func(), error) {
	sc, use := scopeOf(args), listUse(args)
	if sc == scopeNone && use == listNone {
		return nil, nil
	}
	d, err := locate(ctx, dir)
	if err != nil {
		return nil, nil // git will fail on its own
	}
	var held []func()
	release := func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	}
	// In order: the repository, the work tree, the list of worktrees
	// (held briefly, never while waiting for another).
	switch {
	case sc == scopeNone:
	case holds(ctx, d.Common):
		if sc == scopeRepo {
			return nil, fmt.Errorf("git %s needs the repository alone and cannot run inside a Locked sequence", strings.Join(args, " "))
		}
	default:
		unlock, err := acquireRepo(ctx, d.Common, sc == scopeRepo)
		if err != nil {
			return nil, err
		}
		held = append(held, unlock)
		if sc == scopeWorkTree {
			unlock, err := acquireTree(ctx, d.Own)
			if err != nil {
				release()
				return nil, err
			}
			held = append(held, unlock)
		}
	}
	if use != listNone && sc != scopeRepo {
		unlock, err := acquireList(ctx, d.Common, use == listAlone)
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, unlock)
	}
	return release, nil
}

type heldKey struct{ key string }

// holds reports whether ctx carries a lock in the repository key (taken by
// Locked).
func holds(ctx context.Context, key string) bool {
	v, _ := ctx.Value(heldKey{key}).(bool)
	return v
}

// Locked runs fn holding the lock of the work tree dir is in (and the
// repository's, shared), so that a sequence of commands (check, then
// update a ref; rebase, then read the result) is not interleaved with
// another of the daemon's in that work tree, nor with a command that needs
// the repository alone. Sequences in other work trees of the repository,
// and ref updates, run beside it. Git commands run with the ctx fn
// receives take no lock again; one that needs the repository alone
// (fetch, worktree add, ...) is refused there.
func Locked(ctx context.Context, dir string, fn func(ctx context.Context) error) error {
	d, err := locate(ctx, dir)
	if err != nil || holds(ctx, d.Common) {
		return fn(ctx)
	}
	unlockRepo, err := acquireRepo(ctx, d.Common, false)
	if err != nil {
		return err
	}
	defer unlockRepo()
	unlockTree, err := acquireTree(ctx, d.Own)
	if err != nil {
		return err
	}
	defer unlockTree()
	return fn(context.WithValue(ctx, heldKey{d.Common}, true))
}

// Serialized runs fn holding the in-process lock named name of the
// repository dir is in: for a sequence on something all its work trees
// share and git does not keep locked from one command to the next, such
// as the stash stack (refs/stash: push, read which entry is ours, apply,
// drop it by position). It may be taken inside Locked; fn's ctx carries it
// (Serialized again with it runs at once).
func Serialized(ctx context.Context, dir, name string, fn func(ctx context.Context) error) error {
	d, err := locate(ctx, dir)
	if err != nil {
		return fn(ctx)
	}
	key := d.Common + "\x00" + name
	if holds(ctx, key) {
		return fn(ctx)
	}
	unlock, err := acquireTree(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	return fn(context.WithValue(ctx, heldKey{key}, true))
}
