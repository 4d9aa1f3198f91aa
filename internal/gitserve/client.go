package gitserve

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// Remote is where a worker fetches and pushes a task: the task's URL on the
// coordinator (TaskURL), the worker's token and, for https with a private
// CA, the CA's PEM file.
type Remote struct {
	// URL is the task's URL (http:// on loopback, https:// otherwise).
	URL string
	// Token is the worker's bearer token. It reaches git only through the
	// environment (an http.extraHeader in GIT_CONFIG_*): never a command
	// line, a URL or a config file.
	Token string
	// CAFile, when set, is the PEM file of the CA that signed the
	// coordinator's certificate (http.sslCAInfo).
	CAFile string
}

// env is the environment git talks to r with.
func (r Remote) env() ([]string, error) {
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("remote %q is not an http(s) URL", r.URL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("remote %s carries credentials in its URL; pass the token separately", u.Redacted())
	}
	if strings.ContainsAny(r.Token, "\r\n") || r.Token == "" {
		return nil, fmt.Errorf("remote %s: the token is empty or spans lines", r.URL)
	}
	kv := [][2]string{
		{"http.extraHeader", "Authorization: Bearer " + r.Token},
		// A redirect would carry the header to another server.
		{"http.followRedirects", "false"},
		// No credential helper is asked or told about this remote.
		{"credential.helper", ""},
	}
	extra := []string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS="}
	if r.CAFile != "" {
		ca, err := filepath.Abs(r.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file %s: %w", r.CAFile, err)
		}
		if _, err := os.Stat(ca); err != nil {
			return nil, fmt.Errorf("CA file for %s: %w", r.URL, err)
		}
		kv = append(kv, [2]string{"http.sslCAInfo", ca})
		// GIT_SSL_CAINFO in the environment would win over the config.
		extra = append(extra, "GIT_SSL_CAINFO="+ca)
	}
	return configEnv(kv, extra...), nil
}

// Clone clones r into dir (which must not exist or be empty), checking
// out branch (the task's base, or its own branch to resume it). The clone's
// origin is r.URL; the token is not kept anywhere in dir.
func Clone(ctx context.Context, r Remote, dir, branch string) error {
	env, err := r.env()
	if err != nil {
		return err
	}
	if branch == "" || strings.HasPrefix(branch, "-") {
		return fmt.Errorf("cloning %s: %q is not a branch", r.URL, branch)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("cloning %s: %w", r.URL, err)
	}
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("cloning %s: %w", r.URL, err)
	}
	if _, err := git.RunEnv(ctx, parent, env, "clone", "--quiet", "--branch", branch, "--", r.URL, abs); err != nil {
		return fmt.Errorf("cloning %s into %s: %w", r.URL, abs, err)
	}
	return nil
}

// Fetch fetches refspecs from r into the repository at dir; with none, every
// branch the task may read, into refs/remotes/origin/.
func Fetch(ctx context.Context, dir string, r Remote, refspecs ...string) error {
	env, err := r.env()
	if err != nil {
		return err
	}
	if len(refspecs) == 0 {
		refspecs = []string{"+refs/heads/*:refs/remotes/origin/*"}
	}
	for _, s := range refspecs {
		if strings.HasPrefix(s, "-") {
			return fmt.Errorf("fetching from %s: %q is not a refspec", r.URL, s)
		}
	}
	args := append([]string{"fetch", "--quiet", "--no-write-fetch-head", "--", r.URL}, refspecs...)
	if _, err := git.RunEnv(ctx, dir, env, args...); err != nil {
		return fmt.Errorf("fetching from %s: %w", r.URL, err)
	}
	return nil
}

// Push pushes the local branch (a task branch, "neuraphage/<task>/work")
// to the same name on r, never forced: the coordinator takes a new branch or
// a fast-forward and refuses anything else; its reason is in the error.
func Push(ctx context.Context, dir string, r Remote, branch string) error {
	env, err := r.env()
	if err != nil {
		return err
	}
	ref := "refs/heads/" + strings.TrimPrefix(branch, "refs/heads/")
	if branch == "" || strings.HasPrefix(branch, "-") || strings.HasPrefix(branch, "+") || strings.Contains(branch, ":") {
		return fmt.Errorf("pushing to %s: %q is not a branch", r.URL, branch)
	}
	if _, err := git.RunEnv(ctx, dir, env, "push", "--quiet", "--", r.URL, ref+":"+ref); err != nil {
		return fmt.Errorf("pushing %s to %s: %w", branch, r.URL, err)
	}
	return nil
}
