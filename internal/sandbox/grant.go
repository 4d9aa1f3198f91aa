package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Grants is the read side of a policy in Landlock's terms.
type Grants struct {
	// Dirs are granted read with everything beneath them.
	Dirs []string
	// Files are granted read alone.
	Files []string
	// Listed are the ancestors of denied paths: their entries may be
	// listed, nothing beneath them is granted by this.
	Listed []string
}

// ReadGrants computes what to grant so that everything is readable except
// the denied paths and what is beneath them. It walks from / down the
// ancestors of each denied path: each ancestor is listed, each of its
// entries that is neither denied nor an ancestor is granted (symbolic links
// excepted: their targets are granted, or not, where they are). Unreadable
// directories on the way grant nothing.
func ReadGrants(deny []string) Grants {
	denied := map[string]bool{}
	for _, d := range deny {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		denied[filepath.Clean(d)] = true
		denied[resolve(d)] = true
	}
	if denied["/"] {
		return Grants{}
	}
	ancestor := func(p string) bool {
		prefix := p + "/"
		if p == "/" {
			prefix = "/"
		}
		for d := range denied {
			if strings.HasPrefix(d, prefix) {
				return true
			}
		}
		return false
	}
	var g Grants
	var walk func(dir string)
	walk = func(dir string) {
		g.Listed = append(g.Listed, dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case denied[p]:
			case e.Type()&fs.ModeSymlink != 0:
			case ancestor(p):
				if e.IsDir() {
					walk(p)
				}
			case e.IsDir():
				g.Dirs = append(g.Dirs, p)
			default:
				g.Files = append(g.Files, p)
			}
		}
	}
	if len(denied) == 0 {
		g.Dirs = []string{"/"}
		return g
	}
	walk("/")
	return g
}

// resolve returns p, absolute and clean, with symbolic links resolved as
// far as it exists.
func resolve(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	return filepath.Join(resolve(parent), filepath.Base(p))
}

// GitWrites returns what a command in the linked worktree dir of the
// repository repo needs to write for git to commit there on a branch in
// refs/heads/<refDir>/, besides dir itself: in write, the worktree's git
// directory and the directories refs/heads/<refDir> and
// logs/refs/heads/<refDir> of the common git directory, made when missing
// (so a `git pack-refs --all` that removed them, and the branch's loose
// ref, costs the next command nothing: git writes the ref loose again); in
// objects, the shared object store, where a task without an object
// directory of its own writes loose objects (see [Policy].Objects; a task
// with one writes there instead, [Launcher.TaskObjects]).
//
// Git updates a ref by creating <ref>.lock beside it and renaming it over
// the ref, so what is granted is the ref's directory, and every ref in it
// can be moved: refDir is to hold one task's branch alone
// ([Launcher.RefDir]).
//
// dir is the task's to change, so nothing read from it is trusted: the
// common git directory is found from repo (the user's checkout, which tasks
// cannot write), the worktree's git directory named by dir/.git is granted
// only when it is one of that repository's worktrees and names dir back,
// and the ref directory comes from the caller, not from the worktree's
// HEAD. Anything that does not check out grants nothing: git then fails to
// commit, and the command is given no more than its worktree.
func GitWrites(dir, repo, refDir string) (write []string, objects string) {
	if repo == "" || refDir == "" || strings.Contains(refDir, "..") || filepath.IsAbs(refDir) || path.Clean(refDir) != refDir || refDir == "." {
		return nil, ""
	}
	common := commonDir(repo)
	if common == "" {
		return nil, ""
	}
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return nil, "" // a directory (inside dir), or no git at all
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return nil, ""
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	gitdir = resolve(gitdir)
	if filepath.Dir(gitdir) != filepath.Join(common, "worktrees") {
		return nil, ""
	}
	back, err := os.ReadFile(filepath.Join(gitdir, "gitdir"))
	if err != nil || resolve(strings.TrimSpace(string(back))) != resolve(filepath.Join(dir, ".git")) {
		return nil, ""
	}
	out := []string{gitdir}
	for _, d := range []string{filepath.Join(common, "refs", "heads"), filepath.Join(common, "logs", "refs", "heads")} {
		if _, err := os.Stat(d); err != nil {
			continue
		}
		p := filepath.Join(d, filepath.FromSlash(refDir))
		if err := os.MkdirAll(p, 0o755); err == nil {
			out = append(out, p)
		}
	}
	return out, filepath.Join(common, "objects")
}

// CommonDir returns the common git directory of the repository holding
// dir, resolved, or "": found from the file system alone, without running
// git.
func CommonDir(dir string) string { return commonDir(dir) }

// commonDir returns the common git directory of the repository holding
// dir, resolved, or "".
func commonDir(dir string) string {
	for d := resolve(dir); ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return p
		case err == nil:
			// The repository is itself a linked worktree: follow its
			// git directory to the common one.
			b, err := os.ReadFile(p)
			if err != nil {
				return ""
			}
			g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
			if !ok {
				return ""
			}
			if !filepath.IsAbs(g) {
				g = filepath.Join(d, g)
			}
			c, err := os.ReadFile(filepath.Join(g, "commondir"))
			if err != nil {
				return resolve(g)
			}
			cd := strings.TrimSpace(string(c))
			if !filepath.IsAbs(cd) {
				cd = filepath.Join(g, cd)
			}
			return resolve(cd)
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

// LooseDirs returns the loose-object fan-out directories (00..ff) of the git
// object directories objects, making the missing ones: a directory made
// later, under a directory the command may not write, would not be
// writable to it.
func LooseDirs(objects []string) []string {
	var out []string
	for _, o := range objects {
		entries, err := os.ReadDir(o)
		if err != nil {
			continue
		}
		have := make(map[string]bool, len(entries))
		for _, e := range entries {
			have[e.Name()] = e.IsDir()
		}
		for i := range 256 {
			name := fmt.Sprintf("%02x", i)
			d := filepath.Join(o, name)
			if !have[name] {
				if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
					continue
				}
			}
			out = append(out, d)
		}
	}
	return out
}
