package config

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Worktree configures the git worktree each task works in.
type Worktree struct {
	Root    string `yaml:"root"`     // directory holding the worktrees; "" means <repo>/../.neuraphage-worktrees; a relative path is relative to the repository
	Base    string `yaml:"base"`     // branch tasks start from and merge into; "" means main, or the repository's default branch when it has no main
	PortEnv string `yaml:"port_env"` // environment variable that hands each task a free TCP port; default "PORT"; "" hands none; must be a valid env var name [A-Za-z_][A-Za-z0-9_]*
	// IgnoredSkip is the build output not kept when a worktree is removed:
	// "dir/" names a directory anywhere, any other pattern a file name (or
	// path); every other ignored file made or changed since the worktree
	// was provisioned is kept in the task's archive. [] keeps everything.
	IgnoredSkip []string    `yaml:"ignored_skip"`
	Bootstrap   []Bootstrap `yaml:"bootstrap"`
	// Parallel is how many worktrees are made at once (their checkouts
	// and setups); 0 means four per CPU core, at least 8.
	Parallel int `yaml:"parallel"`
}

// MaxWorktreeParallel bounds worktree.parallel.
const MaxWorktreeParallel = 256

// DefaultIgnoredSkip is worktree.ignored_skip's default.
var DefaultIgnoredSkip = []string{"node_modules/", "target/", "dist/", ".cache/", "__pycache__/", "*.pyc"}

// Bootstrap prepares new worktrees of one repository (or of all).
type Bootstrap struct {
	Repo             string   `yaml:"repo"`               // absolute path of the repository; "" applies to every repository
	Copy             []string `yaml:"copy"`               // git-ignored files copied from the repository into each new worktree (relative paths or globs like ".env*"); must be relative and must not contain ".."
	Setup            string   `yaml:"setup"`              // shell command run in each new worktree (sh -c)
	SetupTimeoutSecs int      `yaml:"setup_timeout_secs"` // 0 means 600; else 1..86400
}

// Merge configures how finished work lands.
type Merge struct {
	Auto            bool   `yaml:"auto"`              // enqueue a completed task's branch for merge; false leaves it for review (`merge enqueue`); default true
	Strategy        string `yaml:"strategy"`          // rebase (fast-forward after rebase) | merge (merge commit) | squash; default rebase
	Gate            string `yaml:"gate"`              // command that must pass in the task's worktree, brought up to the target, before landing (sh -c); "" means none
	GateTimeoutSecs int    `yaml:"gate_timeout_secs"` // default 1800, 1..86400
	MaxSendBacks    int    `yaml:"max_send_backs"`    // conflicts or failed gates sent back to a task before its entry is parked; default 3, 0..100
	AuthorName      string `yaml:"author_name"`       // author of the commit made when a task completes; "" means git's configured identity, else "Neuraphage"
	AuthorEmail     string `yaml:"author_email"`      // "" means git's configured identity, else "neuraphage@localhost"
	PR              bool   `yaml:"pr"`                // open a pull request with gh instead of merging locally; default false
	Remote          string `yaml:"remote"`            // remote pushed to for pull requests; default "origin"
	Cleanup         bool   `yaml:"cleanup"`           // remove a task's worktree once its work landed (never when it holds uncommitted files); default true
}

// DefaultSetupTimeout is the timeout of a bootstrap setup command whose
// setup_timeout_secs is 0.
const DefaultSetupTimeout = 600 * time.Second

// mergeStrategies lists the values merge.strategy accepts.
var mergeStrategies = []string{"rebase", "merge", "squash"}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// BootstrapFor returns the bootstrap entry for repo: the one whose Repo equals
// it (cleaned), else the one with an empty Repo, else a zero Bootstrap.
func (w Worktree) BootstrapFor(repo string) Bootstrap {
	if repo != "" {
		want := filepath.Clean(repo)
		for _, b := range w.Bootstrap {
			if b.Repo != "" && filepath.Clean(b.Repo) == want {
				return b
			}
		}
	}
	for _, b := range w.Bootstrap {
		if b.Repo == "" {
			return b
		}
	}
	return Bootstrap{}
}

// SetupTimeout returns the timeout of the setup command: setup_timeout_secs,
// or [DefaultSetupTimeout] when it is 0.
func (b Bootstrap) SetupTimeout() time.Duration {
	if b.SetupTimeoutSecs == 0 {
		return DefaultSetupTimeout
	}
	return time.Duration(b.SetupTimeoutSecs) * time.Second
}

// Validate checks the worktree settings and every bootstrap entry.
func (w Worktree) Validate() error {
	if strings.HasPrefix(w.Root, "~") {
		return &Error{Key: "root", Msg: fmt.Sprintf("~ is not expanded; want an absolute path or one relative to the repository, got %q", w.Root)}
	}
	if err := checkGitName("base", w.Base); err != nil {
		return err
	}
	if w.PortEnv != "" && !envName.MatchString(w.PortEnv) {
		return &Error{Key: "port_env", Msg: fmt.Sprintf("want an environment variable name (letters, digits and _, not starting with a digit) or \"\" for none, got %q", w.PortEnv)}
	}
	if w.Parallel < 0 || w.Parallel > MaxWorktreeParallel {
		return &Error{Key: "parallel", Msg: fmt.Sprintf("want 0 (four per CPU core) to %d worktrees made at once, got %d", MaxWorktreeParallel, w.Parallel)}
	}
	for _, p := range w.IgnoredSkip {
		if _, err := path.Match(strings.TrimSuffix(p, "/"), ""); err != nil || strings.Trim(p, "/") == "" {
			return &Error{Key: "ignored_skip", Msg: fmt.Sprintf("want a file pattern like \"*.pyc\" or a directory like \"dist/\", got %q", p)}
		}
	}
	seen := map[string]int{} // cleaned repo ("" for all) -> index of its entry
	for i, b := range w.Bootstrap {
		prefix := "bootstrap." + strconv.Itoa(i)
		if err := b.validate(); err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				ce.Key = join(prefix, ce.Key)
			}
			return err
		}
		repo := b.Repo
		if repo != "" {
			repo = filepath.Clean(repo)
		}
		if first, dup := seen[repo]; dup {
			what := "repository " + strconv.Quote(repo)
			if repo == "" {
				what = `every repository (repo "")`
			}
			return &Error{Key: prefix + ".repo", Msg: fmt.Sprintf("%s already has an entry, worktree.bootstrap.%d", what, first)}
		}
		seen[repo] = i
	}
	return nil
}

// validate checks one bootstrap entry; keys are relative to the entry.
func (b Bootstrap) validate() error {
	if b.Repo != "" && !filepath.IsAbs(b.Repo) {
		return &Error{Key: "repo", Msg: fmt.Sprintf("want an absolute path, or \"\" for every repository, got %q", b.Repo)}
	}
	for i, p := range b.Copy {
		key := "copy." + strconv.Itoa(i)
		switch {
		case p == "":
			return &Error{Key: key, Msg: "must not be empty"}
		case filepath.IsAbs(p):
			return &Error{Key: key, Msg: fmt.Sprintf("want a path relative to the repository, got %q", p)}
		case slices.Contains(strings.Split(filepath.ToSlash(p), "/"), ".."):
			return &Error{Key: key, Msg: fmt.Sprintf("must not contain \"..\", got %q", p)}
		case filepath.Clean(p) == ".":
			return &Error{Key: key, Msg: fmt.Sprintf("names the repository itself; want files in it, got %q", p)}
		}
		if _, err := filepath.Match(p, ""); err != nil {
			return &Error{Key: key, Msg: fmt.Sprintf("not a valid glob pattern: %q", p), Err: err}
		}
	}
	return checkRange("setup_timeout_secs", b.SetupTimeoutSecs, 0, 86400)
}

// Validate checks the merge settings.
func (m Merge) Validate() error {
	if !slices.Contains(mergeStrategies, m.Strategy) {
		return &Error{Key: "strategy", Msg: fmt.Sprintf("want one of %s, got %q", strings.Join(mergeStrategies, ", "), m.Strategy)}
	}
	err := errors.Join(
		checkRange("gate_timeout_secs", m.GateTimeoutSecs, 1, 86400),
		checkRange("max_send_backs", m.MaxSendBacks, 0, 100),
	)
	if err != nil {
		return err
	}
	if strings.ContainsAny(m.AuthorName, "<>\n") {
		return &Error{Key: "author_name", Msg: fmt.Sprintf("must not contain <, > or a line break, got %q", m.AuthorName)}
	}
	if m.AuthorEmail != "" {
		switch {
		case !strings.Contains(m.AuthorEmail, "@"):
			return &Error{Key: "author_email", Msg: fmt.Sprintf("want an address with @, or \"\" for git's identity, got %q", m.AuthorEmail)}
		case strings.ContainsAny(m.AuthorEmail, "<> \t\n"):
			return &Error{Key: "author_email", Msg: fmt.Sprintf("must not contain <, > or spaces, got %q", m.AuthorEmail)}
		}
	}
	if m.PR && m.Remote == "" {
		return &Error{Key: "remote", Msg: "must not be empty when pr is true"}
	}
	return checkGitName("remote", m.Remote)
}

// checkGitName rejects a branch or remote name that git would take for an
// option or split into several arguments. "" is left to the caller.
func checkGitName(key, name string) error {
	switch {
	case strings.HasPrefix(name, "-"):
		return &Error{Key: key, Msg: fmt.Sprintf("must not start with -, got %q", name)}
	case strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return &Error{Key: key, Msg: fmt.Sprintf("must not contain spaces or control characters, got %q", name)}
	}
	return nil
}
