package merge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// A fast-forward of the user's checkout of the target (`git merge
// --ff-only`) killed half way — git dies with the daemon — leaves files of
// the commit it was moving to written into the work tree while HEAD and the
// index stay where they were: new files look untracked, changed ones
// modified. Every later fast-forward refuses ("untracked working tree files
// would be overwritten"), and the entry waits for good.
//
// mendFastForward recognizes that state against the commit about to land:
// every change in the checkout is an unstaged one, each changed or
// untracked file that the commit has holds exactly the commit's content, and
// each tracked file that is missing is one the commit drops. Then the
// fast-forward would leave every such file as it is now, so it can run:
// the files are first moved aside, kept under
// <git-common-dir>/neuraphage/fast-forward/<entry>-<n>/ (nothing is
// deleted), the tracked ones written back from the index, and git then
// writes the same content again. Any other change — a staged one, a file
// with other content, a missing file the commit keeps — is the user's, and
// nothing is touched. It returns the directory the files were kept in, ""
// when it did nothing.
// maxMend bounds the changes mendFastForward looks at: a checkout with
// more is left to its user.
const maxMend = 2000

func (q *Queue) mendFastForward(ctx context.Context, entry int64, dir, commit string) (string, error) {
	if ok, err := unstageFastForward(ctx, dir, commit); err != nil || !ok {
		return "", err
	}
	out, err := git.Run(ctx, dir, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all")
	if err != nil || out == "" {
		return "", err
	}
	type change struct {
		path    string
		tracked bool
		missing bool
	}
	var changes []change
	for _, rec := range strings.Split(out, "\x00") {
		if len(rec) < 4 {
			continue
		}
		xy, p := rec[:2], rec[3:]
		switch xy {
		case "??":
			changes = append(changes, change{path: p})
		case " M", " T":
			changes = append(changes, change{path: p, tracked: true})
		case " D":
			changes = append(changes, change{path: p, tracked: true, missing: true})
		default:
			return "", nil // staged, conflicted: not what a killed fast-forward leaves
		}
	}
	if len(changes) > maxMend {
		return "", nil
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.path
	}
	blobs := map[string]string{}
	tree, err := git.Run(ctx, dir, append([]string{"ls-tree", "-r", "-z", commit, "--"}, paths...)...)
	if err != nil {
		return "", err
	}
	for _, rec := range strings.Split(tree, "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
			blobs[p] = f[2]
		}
	}
	var hash []string
	for _, c := range changes {
		if _, in := blobs[c.path]; in && !c.missing {
			hash = append(hash, c.path)
		}
	}
	sums := map[string]string{}
	if len(hash) > 0 {
		out, err := git.RunStdin(ctx, dir, strings.Join(hash, "\n")+"\n", "hash-object", "--no-filters", "--stdin-paths")
		if err != nil {
			if goneSince(dir, hash) {
				return "", nil // the user moved a file away meanwhile: look again next time
			}
			return "", err
		}
		got := strings.Fields(out)
		if len(got) != len(hash) {
			return "", nil // a name git cannot take one a line
		}
		for i, p := range hash {
			sums[p] = got[i]
		}
	}
	var aside, restore []string
	for _, c := range changes {
		blob, inCommit := blobs[c.path]
		switch {
		case c.missing && inCommit:
			return "", nil // the commit keeps it: the user deleted it
		case c.missing:
			restore = append(restore, c.path) // the fast-forward drops it
		case !inCommit && c.tracked:
			return "", nil
		case !inCommit:
			// An untracked file the commit does not have is not in the way.
		default:
			if sums[c.path] != blob {
				return "", nil // other content: the user's
			}
			aside = append(aside, c.path)
			if c.tracked {
				restore = append(restore, c.path)
			}
		}
	}
	if len(aside) == 0 && len(restore) == 0 {
		return "", nil
	}
	common, err := git.Run(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	base := filepath.Join(strings.TrimSpace(common), "neuraphage", "fast-forward")
	keep := ""
	for n := 1; ; n++ {
		keep = filepath.Join(base, strconv.FormatInt(entry, 10)+"-"+strconv.Itoa(n))
		if _, err := os.Lstat(keep); os.IsNotExist(err) {
			break
		}
	}
	for _, p := range aside {
		dst := filepath.Join(keep, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return keep, err
		}
		if err := os.Rename(filepath.Join(dir, filepath.FromSlash(p)), dst); err != nil {
			return keep, fmt.Errorf("keeping %s aside before the fast-forward: %w", p, err)
		}
	}
	if len(restore) > 0 {
		// Missing tracked files only (those moved aside and those the
		// commit drops): checkout-index never overwrites without -f.
		if _, err := git.Run(ctx, dir, append([]string{"checkout-index", "-q", "--"}, restore...)...); err != nil {
			return keep, err
		}
	}
	q.log.Warn("the checkout of the target held files of a fast-forward killed half way; they were kept aside and the fast-forward runs again",
		"entry", entry, "checkout", dir, "files", len(aside)+len(restore), "kept_in", keep)
	return keep, nil
}

// unstageFastForward handles a fast-forward killed after git wrote the
// index but before it moved HEAD: the commit's files are then staged (and
// the same in the work tree) against HEAD. When every staged change is
// exactly the commit's (the index equals the commit at those paths) and
// none has an unstaged change on top, the index entries go back to HEAD's
// (`git reset -- paths`, which leaves the work tree alone) and the
// unstaged state mendFastForward knows is left. The staged content is the
// commit's, so nothing of the user's is lost. It reports false, touching
// nothing, when a staged change is the user's; true when there was none
// or they were unstaged.
func unstageFastForward(ctx context.Context, dir, commit string) (bool, error) {
	out, err := git.Run(ctx, dir, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=no")
	if err != nil {
		return false, err
	}
	var staged []string
	for _, rec := range strings.Split(out, "\x00") {
		if len(rec) < 4 {
			continue
		}
		switch xy, p := rec[:2], rec[3:]; xy {
		case "A ", "M ", "D ", "T ":
			staged = append(staged, p)
		default:
			if xy[0] != ' ' {
				return false, nil // staged and changed again, or conflicted: the user's
			}
		}
	}
	if len(staged) == 0 {
		return true, nil
	}
	if len(staged) > maxMend {
		return false, nil
	}
	diff, err := git.Run(ctx, dir, append([]string{"diff-index", "--cached", "--name-only", commit, "--"}, staged...)...)
	if err != nil || strings.TrimSpace(diff) != "" {
		return false, err // staged content other than the commit's: the user's
	}
	if _, err := git.Run(ctx, dir, append([]string{"reset", "-q", "--"}, staged...)...); err != nil {
		return false, err
	}
	return true, nil
}

// goneSince reports whether one of paths (relative to dir) no longer
// exists: the user changed the checkout while it was being read.
func goneSince(dir string, paths []string) bool {
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(dir, p)); errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}
