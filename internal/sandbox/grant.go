package sandbox

import (
	"errors"
	"io/fs"
	"os"
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

// GitWrites returns what a command in dir needs to write for git to commit
// there, besides dir itself. For a linked worktree (dir/.git is a file
// naming its git directory) that is its git directory, the shared object
// store, and the directories of its branch's ref and reflog (the nearest
// existing ones, up to refs/heads and logs); for a plain checkout it is
// nothing, its .git being inside dir. Paths that cannot be read are left
// out: the command then fails to commit, it is not given more.
func GitWrites(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return nil // a directory (inside dir), or no git at all
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return nil
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	gitdir = filepath.Clean(gitdir)
	out := []string{gitdir}
	common := gitdir
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
		common = filepath.Clean(common)
	}
	if common == gitdir {
		return out
	}
	out = append(out, filepath.Join(common, "objects"))
	head, err := os.ReadFile(filepath.Join(gitdir, "HEAD"))
	if err != nil {
		return out
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: ")
	if !ok || !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return out // detached: commits need no ref
	}
	refDir := filepath.Dir(filepath.FromSlash(ref))
	out = append(out,
		nearest(filepath.Join(common, refDir), filepath.Join(common, "refs", "heads")),
		nearest(filepath.Join(common, "logs", refDir), filepath.Join(common, "logs")))
	return out
}

// nearest returns p if it exists, else its nearest existing ancestor, but
// not above floor (returned as it is).
func nearest(p, floor string) string {
	for p != floor && len(p) > len(floor) {
		if _, err := os.Stat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return p
		}
		p = filepath.Dir(p)
	}
	return floor
}
