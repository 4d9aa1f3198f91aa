package git

import "testing"

func TestScopeOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want scope
	}{
		{[]string{"rev-parse", "--verify", "HEAD"}, scopeNone},
		{[]string{"symbolic-ref", "--quiet", "--short", "HEAD"}, scopeNone},
		{[]string{"symbolic-ref", "HEAD", "refs/heads/x"}, scopeShared},
		{[]string{"symbolic-ref", "--delete", "HEAD"}, scopeShared},
		{[]string{"config", "--get", "user.name"}, scopeNone},
		{[]string{"config", "user.name", "x"}, scopeRepo},
		{[]string{"branch", "--list", "in-*"}, scopeNone},
		{[]string{"branch"}, scopeNone},
		{[]string{"branch", "-D", "x"}, scopeShared},
		{[]string{"tag", "t1"}, scopeShared},
		{[]string{"tag", "-l"}, scopeNone},
		{[]string{"for-each-ref", "refs/heads/"}, scopeNone},
		{[]string{"merge-base", "--is-ancestor", "a", "b"}, scopeNone},
		{[]string{"status", "--porcelain"}, scopeNone},
		{[]string{"update-ref", "-d", "refs/heads/x", "abc"}, scopeShared},
		{[]string{"worktree", "list", "--porcelain"}, scopeNone},
		{[]string{"worktree", "add", "-b", "b", "/p", "HEAD"}, scopeShared},
		{[]string{"worktree", "remove", "/p"}, scopeShared},
		{[]string{"worktree", "prune"}, scopeRepo},
		{[]string{"-c", "user.name=x", "commit", "-m", "m"}, scopeWorkTree},
		{[]string{"reset", "--hard", "-q"}, scopeWorkTree},
		{[]string{"stash", "list"}, scopeNone},
		{[]string{"stash", "push", "-q"}, scopeWorkTree},
		{[]string{"fetch", "--quiet", "origin"}, scopeRepo},
		{[]string{"remote", "-v"}, scopeNone},
		{[]string{"remote", "add", "o", "url"}, scopeRepo},
		{[]string{"pack-refs", "--all"}, scopeRepo},
	} {
		if got := scopeOf(c.args); got != c.want {
			t.Errorf("scopeOf(%q) = %d, want %d", c.args, got, c.want)
		}
	}
}

func TestListUse(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"worktree", "add", "--no-checkout", "-b", "b", "/p", "HEAD"}, listAlone},
		{[]string{"worktree", "remove", "/p"}, listNone},
		{[]string{"worktree", "list", "--porcelain", "-z"}, listNone},
		{[]string{"worktree", "lock", "/p"}, listShared},
		{[]string{"branch", "--list"}, listShared},
		{[]string{"rebase", "-q", "main"}, listShared},
		{[]string{"branch", "-D", "x"}, listShared},
		{[]string{"update-ref", "refs/heads/x", "abc"}, listNone},
		{[]string{"reset", "--hard", "-q"}, listNone},
		{[]string{"commit", "-m", "m"}, listNone},
	} {
		if got := listUse(c.args); got != c.want {
			t.Errorf("listUse(%q) = %d, want %d", c.args, got, c.want)
		}
	}
}
