package git

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// RefTips returns the commit each ref under prefix ("refs/heads/neuraphage/",
// say) points at, by full ref name: one git process for every ref.
func RefTips(ctx context.Context, dir, prefix string) (map[string]string, error) {
	out, err := run(ctx, dir, nil, "for-each-ref", "--format=%(refname)%00%(objectname)", prefix)
	if err != nil {
		return nil, err
	}
	tips := map[string]string{}
	for line := range strings.SplitSeq(out, "\n") {
		name, sha, ok := strings.Cut(line, "\x00")
		if ok && name != "" {
			tips[name] = sha
		}
	}
	return tips, nil
}

// Commit is one commit of a Graph.
type Commit struct {
	ID      string
	Parents []string
	Subject string
	// Files are the paths the commit changed against its first parent;
	// empty for merge commits.
	Files []string
}

// Graph is the part of a repository's history that some heads do not
// share: every commit reachable from one of them and not from all.
// Ahead/behind questions between the heads are answered from it in
// memory, so that comparing a hundred branches with main costs two git
// processes instead of two hundred.
type Graph struct {
	// Order lists the commits newest first (topological order).
	Order   []string
	Commits map[string]*Commit
	// Base is the commit every head descends from ("" when they share no
	// history; the graph then holds all of it).
	Base string
}

// LoadGraph reads the history that heads (commit ids or revisions) do not
// all share, with the files each commit changed.
func LoadGraph(ctx context.Context, dir string, heads []string) (*Graph, error) {
	heads = slices.Compact(slices.Sorted(slices.Values(heads)))
	if len(heads) == 0 {
		return &Graph{Commits: map[string]*Commit{}}, nil
	}
	base := ""
	if len(heads) > 1 {
		out, err := run(ctx, dir, nil, append([]string{"merge-base", "--octopus"}, heads...)...)
		var gerr *Error
		switch {
		case err == nil:
			base = strings.TrimSpace(out)
		case errors.As(err, &gerr) && gerr.ExitCode == 1 && strings.TrimSpace(gerr.Stderr) == "":
			// No common ancestor (unrelated histories): walk everything.
		default:
			return nil, err
		}
	}
	// The user's log settings must not change what is read: root commits
	// list their files, no signatures or notes are shown.
	args := []string{"-c", "core.quotePath=false", "-c", "log.showRoot=true", "-c", "log.showSignature=false", "log", "--no-notes", "--topo-order", "--no-renames", "--name-only",
		"--format=%x1e%H %P%x1f%s"}
	args = append(args, heads...)
	if base != "" {
		args = append(args, "^"+base)
	}
	args = append(args, "--")
	out, err := run(ctx, dir, nil, args...)
	if err != nil {
		return nil, err
	}
	g := &Graph{Commits: map[string]*Commit{}, Base: base}
	for rec := range strings.SplitSeq(out, "\x1e") {
		if rec == "" {
			continue
		}
		head, rest, _ := strings.Cut(rec, "\n")
		ids, subject, _ := strings.Cut(head, "\x1f")
		f := strings.Fields(ids)
		if len(f) == 0 {
			continue
		}
		c := &Commit{ID: f[0], Parents: f[1:], Subject: subject}
		for name := range strings.SplitSeq(rest, "\n") {
			if name == "" {
				continue
			}
			if strings.HasPrefix(name, `"`) {
				if u, err := strconv.Unquote(name); err == nil {
					name = u
				}
			}
			c.Files = append(c.Files, name)
		}
		g.Order = append(g.Order, c.ID)
		g.Commits[c.ID] = c
	}
	return g, nil
}

// reach returns the commits of g reachable from id.
func (g *Graph) reach(id string) map[string]bool {
	seen := map[string]bool{}
	stack := []string{id}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c] {
			continue
		}
		n, ok := g.Commits[c]
		if !ok {
			continue // outside the graph: shared by every head
		}
		seen[c] = true
		stack = append(stack, n.Parents...)
	}
	return seen
}

// Divergence compares a branch with main.
type Divergence struct {
	// Behind are main's commits the branch lacks, Ahead the branch's
	// commits main lacks; both newest first.
	Behind, Ahead []string
	// MainFiles are the files Behind changed, BranchFiles those Ahead
	// changed; sorted.
	MainFiles, BranchFiles []string
}

// Compare says how branch and main (both heads LoadGraph was given, as
// the same strings) diverge.
func (g *Graph) Compare(main, branch string) Divergence {
	m, b := g.reach(main), g.reach(branch)
	var d Divergence
	mf, bf := map[string]bool{}, map[string]bool{}
	for _, id := range g.Order {
		inM, inB := m[id], b[id]
		switch {
		case inM && !inB:
			d.Behind = append(d.Behind, id)
			for _, f := range g.Commits[id].Files {
				mf[f] = true
			}
		case inB && !inM:
			d.Ahead = append(d.Ahead, id)
			for _, f := range g.Commits[id].Files {
				bf[f] = true
			}
		}
	}
	d.MainFiles = sortedSet(mf)
	d.BranchFiles = sortedSet(bf)
	return d
}

func sortedSet(s map[string]bool) []string {
	if len(s) == 0 {
		return nil
	}
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Tips returns the commit each of refs (full names) points at, "" for a
// ref that does not exist: one git process for all of them.
func Tips(ctx context.Context, dir string, refs ...string) ([]string, error) {
	out, err := run(ctx, dir, nil, append([]string{"for-each-ref", "--format=%(refname)%00%(objectname)"}, refs...)...)
	if err != nil {
		return nil, err
	}
	found := map[string]string{}
	for line := range strings.SplitSeq(out, "\n") {
		if name, sha, ok := strings.Cut(line, "\x00"); ok {
			found[name] = sha
		}
	}
	tips := make([]string, len(refs))
	for i, r := range refs {
		tips[i] = found[r]
	}
	return tips, nil
}

// AheadBehind counts the commits of b not in a (ahead) and of a not in b
// (behind), in one git process.
func AheadBehind(ctx context.Context, dir, a, b string) (ahead, behind int, err error) {
	out, err := run(ctx, dir, nil, "rev-list", "--left-right", "--count", a+"..."+b)
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return 0, 0, errors.New("git rev-list --left-right --count: unexpected output " + strconv.Quote(out))
	}
	if behind, err = strconv.Atoi(f[0]); err != nil {
		return 0, 0, err
	}
	ahead, err = strconv.Atoi(f[1])
	return ahead, behind, err
}
