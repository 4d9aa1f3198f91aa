package gitserve_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/git/gittest"
	"github.com/neuraphage/neuraphage-go/internal/gitserve"
)

func TestMain(m *testing.M) {
	gittest.Isolate()
	os.Exit(m.Run())
}

// Tokens of the two workers of every test.
const (
	token1 = "w1-secret-token-0123456789abcdef"
	token2 = "w2-secret-token-0123456789abcdef"
)

// cluster is a coordinator repository served by a Server over real HTTP,
// with workers w1 and w2 granted.
type cluster struct {
	t    testing.TB
	repo string // the coordinator's (the user's) repository
	srv  *gitserve.Server
	http *httptest.Server
	base string // URL the Server is mounted at
	logs *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newCluster(t testing.TB, tlsServer bool) *cluster {
	t.Helper()
	c := &cluster{t: t, repo: filepath.Join(t.TempDir(), "repo"), logs: &syncBuffer{}}
	c.git(c.repo, "..", "init", "--quiet", "--initial-branch=main", c.repo)
	c.commit(c.repo, "README", "hello\n")
	c.git(c.repo, "", "branch", "private")
	c.srv = gitserve.New(gitserve.Options{Logger: slog.New(slog.NewTextHandler(c.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	mux := http.NewServeMux()
	mux.Handle("/git/", http.StripPrefix("/git", c.srv))
	if tlsServer {
		c.http = httptest.NewTLSServer(mux)
	} else {
		c.http = httptest.NewServer(mux)
	}
	t.Cleanup(c.http.Close)
	c.base = c.http.URL + "/git"
	for w, tok := range map[string]string{"w1": token1, "w2": token2} {
		if err := c.srv.Grant(w, tok); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// git runs git in dir ("" is the repository; ".." its parent) and returns
// its output.
func (c *cluster) git(dir, rel string, args ...string) string {
	c.t.Helper()
	switch rel {
	case "..":
		dir = filepath.Dir(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			c.t.Fatal(err)
		}
	}
	out, err := git.Run(context.Background(), dir, args...)
	if err != nil {
		c.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(out)
}

// commit writes file in the work tree at dir and commits it.
func (c *cluster) commit(dir, file, content string) string {
	c.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.git(dir, "", "add", file)
	c.git(dir, "", "commit", "--quiet", "-m", "change "+file)
	return c.git(dir, "", "rev-parse", "HEAD")
}

// assign gives task to worker at epoch.
func (c *cluster) assign(task, worker string, epoch uint64) {
	c.t.Helper()
	err := c.srv.Assign(context.Background(), gitserve.Assignment{Task: task, Worker: worker, Epoch: epoch, Repo: c.repo, Base: "main"})
	if err != nil {
		c.t.Fatal(err)
	}
}

// remote is task at epoch as worker (by token) sees it.
func (c *cluster) remote(task string, epoch uint64, token string) gitserve.Remote {
	return gitserve.Remote{URL: gitserve.TaskURL(c.base, task, epoch), Token: token}
}

// clone clones task's base into a fresh directory and starts its branch.
func (c *cluster) clone(r gitserve.Remote, branch string) string {
	c.t.Helper()
	dir := filepath.Join(c.t.TempDir(), "work")
	if err := gitserve.Clone(context.Background(), r, dir, "main"); err != nil {
		c.t.Fatalf("clone: %v", err)
	}
	c.git(dir, "", "checkout", "--quiet", "-b", branch)
	return dir
}

// refs returns the coordinator's refs and their objects, one per line.
func (c *cluster) refs() string {
	c.t.Helper()
	return c.git(c.repo, "", "for-each-ref", "--format=%(refname) %(objectname)")
}

// objects returns how many objects the coordinator's repository holds.
func (c *cluster) objects() string {
	c.t.Helper()
	return c.git(c.repo, "", "count-objects", "-v")
}
