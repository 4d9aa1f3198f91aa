package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrBare is returned (wrapped) for a bare repository: tasks need a work
// tree.
var ErrBare = errors.New("is a bare repository; neuraphage needs one with a work tree")

// ErrNoRef is returned (wrapped) when a ref or revision does not exist.
var ErrNoRef = errors.New("no such ref")

// Repo describes the repository a directory is in.
type Repo struct {
	// Top is the top of the work tree the directory is in (for a linked
	// worktree, the worktree's own top).
	Top string
	// Main is the top of the repository's main work tree. When the git
	// directory is not <main>/.git (a separate git dir) and Inspect runs in
	// a linked worktree, git records no way back to it: Main is then Top.
	Main string
	// CommonDir is the git directory shared by all worktrees; GitDir is this
	// work tree's own.
	CommonDir, GitDir string
	// Branch is the branch checked out in Top, "" when HEAD is detached or
	// unborn; Head is the commit, "" in an empty repository.
	Branch, Head string
}

// Inspect describes the repository dir is in. A directory outside any
// repository is ErrNotRepo; a bare repository is ErrBare.
func Inspect(ctx context.Context, dir string) (Repo, error) {
	d, err := locate(ctx, dir)
	if err != nil {
		return Repo{}, err
	}
	if d.bare {
		return Repo{}, fmt.Errorf("%s %w", dir, ErrBare)
	}
	r := Repo{CommonDir: d.Common, GitDir: d.Own}
	if r.Top, err = workTreeTop(ctx, dir, d); err != nil {
		return Repo{}, err
	}
	r.Main = r.Top
	if filepath.Base(r.CommonDir) == ".git" {
		r.Main = filepath.Dir(r.CommonDir)
	}
	r.Head, _ = RevParse(ctx, dir, "HEAD")
	if r.Head == "" {
		return r, nil
	}
	if b, ok := headBranch(d.Own); ok {
		r.Branch = b
	} else if b, err := run(ctx, dir, nil, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		r.Branch = strings.TrimSpace(b)
	}
	return r, nil
}

// RevParse returns the commit rev names, or an error wrapping ErrNoRef.
func RevParse(ctx context.Context, dir, rev string) (string, error) {
	out, err := run(ctx, dir, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && gerr.ExitCode == 1 {
			return "", fmt.Errorf("%s: %w", rev, ErrNoRef)
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// BranchTip returns the commit of branch name in r: read from its loose
// ref file when there is one holding an object name (git reads a loose
// ref before packed-refs, and replaces the file whole when it updates it),
// else asked of git (RevParse), as for a packed ref, a symbolic one, or
// another ref storage.
func BranchTip(ctx context.Context, r Repo, name string) (string, error) {
	if r.CommonDir != "" && os.Getenv("GIT_DIR") == "" && os.Getenv("GIT_COMMON_DIR") == "" {
		b, err := os.ReadFile(filepath.Join(r.CommonDir, "refs", "heads", filepath.FromSlash(name)))
		if oid := strings.TrimSuffix(string(b), "\n"); err == nil && isObjectName(oid) {
			return oid, nil
		}
	}
	return RevParse(ctx, r.Main, "refs/heads/"+name)
}

// isObjectName reports whether s is a full object name (SHA-1 or SHA-256),
// in lower case as git writes it.
func isObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// BranchExists reports whether refs/heads/name exists.
func BranchExists(ctx context.Context, dir, name string) (bool, error) {
	_, err := RevParse(ctx, dir, "refs/heads/"+name)
	if errors.Is(err, ErrNoRef) {
		return false, nil
	}
	return err == nil, err
}

// DefaultBranch picks the branch tasks start from when none is configured:
// main if it exists, else the branch origin/HEAD names, else master, else
// the branch checked out in the main work tree. A repository with none of
// these (detached HEAD and no main) is an error saying what to configure.
func DefaultBranch(ctx context.Context, r Repo) (string, error) {
	if ok, err := BranchExists(ctx, r.Main, "main"); err != nil || ok {
		return "main", err
	}
	if out, err := run(ctx, r.Main, nil, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"); err == nil {
		name := strings.TrimPrefix(strings.TrimSpace(out), "origin/")
		if ok, _ := BranchExists(ctx, r.Main, name); ok {
			return name, nil
		}
	}
	if ok, err := BranchExists(ctx, r.Main, "master"); err != nil || ok {
		return "master", err
	}
	if b, err := run(ctx, r.Main, nil, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		if name := strings.TrimSpace(b); name != "" {
			if ok, _ := BranchExists(ctx, r.Main, name); ok {
				return name, nil
			}
		}
	}
	return "", fmt.Errorf("%s has no main branch and HEAD is not on a branch: set worktree.base in the config to the branch tasks start from", r.Main)
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func IsAncestor(ctx context.Context, dir, a, b string) (bool, error) {
	if a == b && isObjectID(a) {
		return true, nil // a commit is its own ancestor
	}
	_, err := run(ctx, dir, nil, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	var gerr *Error
	if errors.As(err, &gerr) && gerr.ExitCode == 1 {
		return false, nil
	}
	return false, err
}

// Count returns how many commits are in "a..b" (reachable from b, not a).
func Count(ctx context.Context, dir, a, b string) (int, error) {
	if a == b && isObjectID(a) {
		return 0, nil
	}
	out, err := run(ctx, dir, nil, "rev-list", "--count", a+".."+b)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// WorktreeInfo is one entry of `git worktree list`.
type WorktreeInfo struct {
	Path string
	Head string
	// Branch is the short branch name, "" when detached.
	Branch   string
	Bare     bool
	Detached bool
	Locked   bool
	// Prunable: git knows the worktree but its directory is gone.
	Prunable bool
}

// Worktrees lists the work trees of the repository dir is in, the main
// one first.
func Worktrees(ctx context.Context, dir string) ([]WorktreeInfo, error) {
	out, err := run(ctx, dir, nil, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var list []WorktreeInfo
	var cur *WorktreeInfo
	for _, f := range strings.Split(out, "\x00") {
		switch {
		case f == "":
			cur = nil
		case strings.HasPrefix(f, "worktree "):
			list = append(list, WorktreeInfo{Path: filepath.Clean(strings.TrimPrefix(f, "worktree "))})
			cur = &list[len(list)-1]
		case cur == nil:
		case strings.HasPrefix(f, "HEAD "):
			cur.Head = strings.TrimPrefix(f, "HEAD ")
		case strings.HasPrefix(f, "branch "):
			cur.Branch = strings.TrimPrefix(strings.TrimPrefix(f, "branch "), "refs/heads/")
		case f == "bare":
			cur.Bare = true
		case f == "detached":
			cur.Detached = true
		case f == "locked" || strings.HasPrefix(f, "locked "):
			cur.Locked = true
		case f == "prunable" || strings.HasPrefix(f, "prunable "):
			cur.Prunable = true
		}
	}
	return list, nil
}

// MergeResult is what merging two commits would give, computed without
// touching any work tree or ref.
type MergeResult struct {
	// Tree is the merged tree (with conflict markers when not clean).
	Tree string
	// Clean reports a merge without conflicts; Conflicts names the files
	// that conflict otherwise.
	Clean     bool
	Conflicts []string
}

// MergeTree predicts merging theirs into ours with `git merge-tree
// --write-tree`: read-only for refs, index and work trees.
func MergeTree(ctx context.Context, dir, ours, theirs string) (MergeResult, error) {
	out, err := run(ctx, dir, nil, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours, theirs)
	var gerr *Error
	conflicted := errors.As(err, &gerr) && gerr.ExitCode == 1
	if err != nil && !conflicted {
		return MergeResult{}, err
	}
	parts := strings.Split(out, "\x00")
	if conflicted && !isObjectID(parts[0]) {
		// Exit 1 without a tree: git could not merge at all (a missing
		// revision, say), which is not a conflict.
		return MergeResult{}, err
	}
	r := MergeResult{Tree: parts[0], Clean: !conflicted}
	if conflicted {
		seen := map[string]bool{}
		for _, f := range parts[1:] {
			if f != "" && !seen[f] {
				seen[f] = true
				r.Conflicts = append(r.Conflicts, f)
			}
		}
	}
	return r, nil
}

// isObjectID reports whether s looks like a full object id (SHA-1 or SHA-256).
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Status is a work tree's state as far as losing work goes.
type Status struct {
	// Changed are tracked files with changes (staged or not), Untracked the
	// files git does not track and does not ignore.
	Changed, Untracked []string
	// InProgress names an operation left half done: "merge", "rebase",
	// "cherry-pick", "revert" or "".
	InProgress string
	// Head is HEAD's commit, "" on an unborn branch.
	Head string
	// Branch is the branch HEAD is on (short name, as refs/heads/<Branch>),
	// "" when HEAD is detached.
	Branch string
}

// Clean reports a work tree with nothing uncommitted, nothing untracked
// and no operation in progress.
func (s Status) Clean() bool {
	return len(s.Changed) == 0 && len(s.Untracked) == 0 && s.InProgress == ""
}

// Describe says in a few words what the status holds.
func (s Status) Describe() string {
	var parts []string
	if n := len(s.Changed); n > 0 {
		parts = append(parts, fmt.Sprintf("%d changed file(s) (%s)", n, first(s.Changed, 3)))
	}
	if n := len(s.Untracked); n > 0 {
		parts = append(parts, fmt.Sprintf("%d untracked file(s) (%s)", n, first(s.Untracked, 3)))
	}
	if s.InProgress != "" {
		parts = append(parts, "a "+s.InProgress+" in progress")
	}
	if len(parts) == 0 {
		return "clean"
	}
	return strings.Join(parts, ", ")
}

func first(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + ", …"
}

// WorkStatus reads the status of the work tree at dir.
func WorkStatus(ctx context.Context, dir string) (Status, error) {
	// --no-renames: a rename is its two paths, each listed once. --branch
	// names HEAD's commit in the same process (--no-ahead-behind: without
	// counting against an upstream).
	out, err := run(ctx, dir, nil, "status", "--porcelain=v2", "--branch", "--no-ahead-behind", "-z", "--no-renames", "--untracked-files=all", "--ignore-submodules=none")
	if err != nil {
		return Status{}, err
	}
	var s Status
	recs := strings.Split(out, "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		// Fields before the path: 8 for a change, 9 for a rename or copy
		// (its original path is the next record), 10 for a conflict.
		fields := 0
		switch {
		case strings.HasPrefix(rec, "# branch.oid "):
			if oid := strings.TrimPrefix(rec, "# branch.oid "); oid != "(initial)" {
				s.Head = oid
			}
		case strings.HasPrefix(rec, "# branch.head "):
			if b := strings.TrimPrefix(rec, "# branch.head "); b != "(detached)" {
				s.Branch = b
			}
		case strings.HasPrefix(rec, "? "):
			s.Untracked = append(s.Untracked, rec[2:])
		case strings.HasPrefix(rec, "1 "):
			fields = 8
		case strings.HasPrefix(rec, "2 "):
			fields = 9
			i++
		case strings.HasPrefix(rec, "u "):
			fields = 10
		}
		if fields > 0 {
			if parts := strings.SplitN(rec, " ", fields+1); len(parts) == fields+1 {
				s.Changed = append(s.Changed, parts[fields])
			}
		}
	}
	d, err := locate(ctx, dir)
	if err != nil {
		return Status{}, err
	}
	gd := d.Own
	for _, p := range []struct{ file, op string }{
		{"MERGE_HEAD", "merge"}, {"rebase-merge", "rebase"}, {"rebase-apply", "rebase"},
		{"CHERRY_PICK_HEAD", "cherry-pick"}, {"REVERT_HEAD", "revert"},
	} {
		if _, err := os.Stat(filepath.Join(gd, p.file)); err == nil {
			s.InProgress = p.op
			break
		}
	}
	return s, nil
}

// IsIgnored reports whether git ignores path (relative to dir). A tracked
// file is not ignored.
func IsIgnored(ctx context.Context, dir, path string) (bool, error) {
	_, err := run(ctx, dir, nil, "check-ignore", "-q", "--", path)
	if err == nil {
		return true, nil
	}
	var gerr *Error
	if errors.As(err, &gerr) && gerr.ExitCode == 1 {
		return false, nil
	}
	return false, err
}

// Identity returns the environment that signs commits made in dir for
// Neuraphage: nil when name and email are empty and git has an identity of
// its own; otherwise name and email, each half that is empty taken from
// git's configuration, else "Neuraphage" / "neuraphage@localhost".
func Identity(ctx context.Context, dir, name, email string) []string {
	if name == "" && email == "" {
		if _, err := run(ctx, dir, nil, "var", "GIT_AUTHOR_IDENT"); err == nil {
			return nil
		}
	}
	if name == "" {
		out, _ := run(ctx, dir, nil, "config", "--get", "user.name")
		if name = strings.TrimSpace(out); name == "" {
			name = "Neuraphage"
		}
	}
	if email == "" {
		out, _ := run(ctx, dir, nil, "config", "--get", "user.email")
		if email = strings.TrimSpace(out); email == "" {
			email = "neuraphage@localhost"
		}
	}
	return []string{
		"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email,
		"GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + email,
	}
}

// IgnoredFiles returns the files git ignores in the work tree at dir,
// relative to it, slash-separated. A directory git ignores whole is one
// entry ending in "/".
func IgnoredFiles(ctx context.Context, dir string) ([]string, error) {
	out, err := run(ctx, dir, nil, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range strings.Split(out, "\x00") {
		if n != "" {
			names = append(names, n)
		}
	}
	return names, nil
}
