// Package gitserve carries a task's code between the coordinator and its
// workers over git's smart HTTP protocol, with real git on both ends.
//
// The coordinator mounts a [Server]: it serves each assigned task at its own
// path, [TaskPath] (task/<id>/<epoch>), out of the task's repository on the
// coordinator, running `git upload-pack` and `git receive-pack` in
// stateless-rpc mode through the git runner. A request carries a worker's
// bearer token ([Server.Grant]); it is served only while the task is assigned
// to that worker at that epoch ([Server.Assign]): a worker sees only the
// tasks sent to it, and one that lost a task (a re-assignment after a
// partition) can neither fetch nor push it any more. A worker reads the
// task's base branch and the task's own branches
// (refs/heads/neuraphage/<id>/...) and nothing else: every other ref is
// hidden from it and git refuses objects not reachable from what it was shown.
// It pushes only the task's own branches, only as new refs or fast-forwards,
// and never deletes one: the Go side reads the push's ref updates before git
// sees a byte of the pack and refuses the others itself (nothing is written
// to the repository), and git is told to deny non-fast-forwards and deletions
// on top, whatever the repository's own configuration says.
//
// The worker's side is [Clone], [Fetch] and [Push]: real git with the token
// in an http.extraHeader passed through the environment (GIT_CONFIG_*), never
// on a command line, in a URL or in .git/config.
package gitserve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// BranchPrefix starts every branch of a task: a worker pushes only
// refs/heads/BranchPrefix<task>/... of the tasks assigned to it.
const BranchPrefix = "neuraphage/"

// Assignment gives one task to one worker: the current assignment of a task
// is the only one whose requests are served.
type Assignment struct {
	// Task is the task's ID; its branches are refs/heads/neuraphage/<Task>/....
	Task string
	// Worker is the worker that runs it, as named to Grant.
	Worker string
	// Epoch orders the task's assignments: a re-assignment takes a higher one.
	Epoch uint64
	// Repo is the directory of the task's repository on the coordinator.
	Repo string
	// Base is the branch the task starts from ("main"): readable, never
	// written.
	Base string
}

// Options configure a Server.
type Options struct {
	// Logger receives one line per refused request and per failed git;
	// tokens are never logged. Nil discards.
	Logger *slog.Logger
	// MaxPushBytes bounds one push's request body; 0 means 4 GiB.
	MaxPushBytes int64
}

// Server serves assigned tasks' repositories to workers over smart HTTP
// (ServeHTTP). Its methods are safe for concurrent use.
type Server struct {
	log     *slog.Logger
	maxPush int64

	mu     sync.Mutex
	tokens map[string][sha256.Size]byte // worker → SHA-256 of its token; guarded by mu
	tasks  map[string]*lease            // task → its current assignment; guarded by mu
	ending map[*lease]bool              // ended leases with pushes running; guarded by mu
}

// lease is one assignment and the pushes admitted under it.
type lease struct {
	a      Assignment
	pushes int           // pushes admitted and still running; guarded by Server.mu
	idle   chan struct{} // closed when ended and pushes reaches 0; guarded by Server.mu
}

// New returns a Server with no workers and no tasks.
func New(opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	max := opts.MaxPushBytes
	if max <= 0 {
		max = 4 << 30
	}
	return &Server{
		log:     log.With("component", "gitserve"),
		maxPush: max,
		tokens:  map[string][sha256.Size]byte{},
		tasks:   map[string]*lease{},
		ending:  map[*lease]bool{},
	}
}

// validateTimeout bounds Assign's checks of a repository.
const validateTimeout = 30 * time.Second

// minTokenLen is the shortest token Grant accepts.
const minTokenLen = 16

// Grant lets worker in with token (replacing its previous one). Only a
// digest of the token is kept.
func (s *Server) Grant(worker, token string) error {
	if !validName(worker) {
		return fmt.Errorf("granting access: worker id %q is not a name of letters, digits, '.', '_' and '-'", worker)
	}
	if len(token) < minTokenLen {
		return fmt.Errorf("granting access to worker %s: a token needs at least %d characters", worker, minTokenLen)
	}
	digest := sha256.Sum256([]byte(token))
	s.mu.Lock()
	defer s.mu.Unlock()
	for w, d := range s.tokens {
		if w != worker && subtle.ConstantTimeCompare(digest[:], d[:]) == 1 {
			return fmt.Errorf("granting access to worker %s: the token is another worker's; a token names one worker", worker)
		}
	}
	s.tokens[worker] = digest
	return nil
}

// workerLocked returns the worker whose token is token, or "". Every
// granted digest is compared, in constant time. s.mu is held.
func (s *Server) workerLocked(token string) string {
	if token == "" {
		return ""
	}
	digest := sha256.Sum256([]byte(token))
	worker := ""
	for w, d := range s.tokens {
		if subtle.ConstantTimeCompare(digest[:], d[:]) == 1 {
			worker = w
		}
	}
	return worker
}

// errNoToken is the refusal of a request without a granted worker's token.
var errNoToken = &refused{"access denied: no valid worker token (unknown or revoked); join the cluster again for a new one"}

// known reports whether token is a granted worker's.
func (s *Server) known(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.workerLocked(token) != ""
}

// Revoke shuts worker out: its requests are refused from now on (a push
// already running ends as it would have).
func (s *Server) Revoke(worker string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tokens, worker)
}

// Assign makes a the task's current assignment: requests under any other
// worker or epoch of the task are refused from now on. It then waits, until
// ctx is done, for the pushes admitted under the task's earlier assignments
// to end: when Assign returns nil, nothing pushed by an earlier holder of the
// task can land any more. The assignment holds even when the wait is cut
// short (the error is ctx's). Assigning the current assignment again is a
// no-op; an epoch lower than the current one, or the current epoch for
// another worker, is an error.
func (s *Server) Assign(ctx context.Context, a Assignment) error {
	// Checking the names and the repository is quick and local: done even
	// when ctx is already cancelled, which only cuts the wait below short.
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), validateTimeout)
	err := a.validate(vctx)
	cancel()
	if err != nil {
		return err
	}
	s.mu.Lock()
	old := s.tasks[a.Task]
	if old != nil {
		switch {
		case old.a == a:
			s.mu.Unlock()
			return nil
		case a.Epoch < old.a.Epoch:
			s.mu.Unlock()
			return fmt.Errorf("assigning task %s: epoch %d is older than the current assignment's (%d)", a.Task, a.Epoch, old.a.Epoch)
		case a.Epoch == old.a.Epoch && a.Worker != old.a.Worker:
			s.mu.Unlock()
			return fmt.Errorf("assigning task %s: epoch %d is already assigned to another worker; re-assign with a higher epoch", a.Task, a.Epoch)
		}
	}
	s.tasks[a.Task] = &lease{a: a}
	s.endLocked(old)
	idle := s.idleLocked(a.Task)
	s.mu.Unlock()
	return waitIdle(ctx, a.Task, idle)
}

// Unassign ends the task's assignment (the task finished, was cancelled or
// is back in the queue): every request for it is refused from now on. Like
// Assign it waits, until ctx is done, for its admitted pushes to end.
func (s *Server) Unassign(ctx context.Context, task string) error {
	s.mu.Lock()
	old := s.tasks[task]
	delete(s.tasks, task)
	s.endLocked(old)
	idle := s.idleLocked(task)
	s.mu.Unlock()
	return waitIdle(ctx, task, idle)
}

// Release is Unassign for the assignment at epoch only: when the task has
// been re-assigned since (a later epoch), the new assignment is left alone
// and Release does nothing. A run that ends calls it for its own epoch
// without racing the task's next run.
func (s *Server) Release(ctx context.Context, task string, epoch uint64) error {
	s.mu.Lock()
	old := s.tasks[task]
	if old == nil || old.a.Epoch != epoch {
		s.mu.Unlock()
		return nil
	}
	delete(s.tasks, task)
	s.endLocked(old)
	idle := s.idleLocked(task)
	s.mu.Unlock()
	return waitIdle(ctx, task, idle)
}

// endLocked ends l (nil: nothing); while pushes admitted under it run, it
// stays in s.ending. s.mu is held.
func (s *Server) endLocked(l *lease) {
	if l == nil {
		return
	}
	if l.pushes == 0 {
		return
	}
	if l.idle == nil {
		l.idle = make(chan struct{})
	}
	s.ending[l] = true
}

// idleLocked returns a channel per ended assignment of task whose pushes
// still run, each closed when they are over. s.mu is held.
func (s *Server) idleLocked(task string) []<-chan struct{} {
	var out []<-chan struct{}
	for l := range s.ending {
		if l.a.Task == task {
			out = append(out, l.idle)
		}
	}
	return out
}

// waitIdle waits until every channel of idle is closed, or ctx is done.
func waitIdle(ctx context.Context, task string, idle []<-chan struct{}) error {
	for _, ch := range idle {
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the pushes of task %s's earlier assignments to end: %w", task, ctx.Err())
		}
	}
	return nil
}

// Assignment returns the task's current assignment.
func (s *Server) Assignment(task string) (Assignment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.tasks[task]
	if !ok {
		return Assignment{}, false
	}
	return l.a, true
}

// Pushing returns how many pushes of task, under its current assignment
// or an earlier one, are running.
func (s *Server) Pushing(task string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if l := s.tasks[task]; l != nil {
		n += l.pushes
	}
	for l := range s.ending {
		if l.a.Task == task {
			n += l.pushes
		}
	}
	return n
}

// refused is a request the server will not serve, with what the worker is
// told.
type refused struct{ msg string }

func (r *refused) Error() string { return r.msg }

// admit checks a request for task at epoch bearing token: the token must be
// a granted worker's and the task assigned to that worker at that epoch. A
// push is counted until its done is called.
func (s *Server) admit(token, task string, epoch uint64, push bool) (Assignment, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	worker := s.workerLocked(token)
	if worker == "" {
		return Assignment{}, nil, errNoToken
	}
	l := s.tasks[task]
	switch {
	case l != nil && epoch < l.a.Epoch:
		return Assignment{}, nil, &refused{fmt.Sprintf("access denied: epoch %d of task %s is no longer current (the task was re-assigned); nothing of it may be fetched or pushed", epoch, task)}
	case l == nil || l.a.Worker != worker || l.a.Epoch != epoch:
		return Assignment{}, nil, &refused{fmt.Sprintf("access denied: task %s (epoch %d) is not assigned to worker %s", task, epoch, worker)}
	}
	if !push {
		return l.a, func() {}, nil
	}
	l.pushes++
	var once sync.Once
	return l.a, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			l.pushes--
			if l.pushes == 0 && l.idle != nil {
				close(l.idle)
				delete(s.ending, l)
			}
		})
	}, nil
}

// checkUpdate returns why u may not be pushed for a, or "".
func checkUpdate(a Assignment, u refUpdate) string {
	prefix := "refs/heads/" + BranchPrefix + a.Task + "/"
	switch {
	case !strings.HasPrefix(u.Ref, prefix) || len(u.Ref) == len(prefix):
		return fmt.Sprintf("a worker may push only the task's branches (%s...), not %s", prefix, u.Ref)
	case isZero(u.New):
		return "deleting a ref is not allowed"
	case !plainRef(u.Ref):
		return fmt.Sprintf("%q is not a plain branch name", u.Ref)
	}
	return ""
}

// plainRef reports whether ref has nothing git's check-ref-format would
// refuse, and nothing else odd: git checks again; this is the first line.
func plainRef(ref string) bool {
	if strings.HasSuffix(ref, "/") || strings.HasSuffix(ref, ".lock") || strings.HasSuffix(ref, ".") {
		return false
	}
	for _, bad := range []string{"..", "//", "/.", "@{", "\\"} {
		if strings.Contains(ref, bad) {
			return false
		}
	}
	for _, c := range ref {
		if c <= ' ' || c == 0x7f || strings.ContainsRune("~^:?*[", c) {
			return false
		}
	}
	return true
}

// TaskPath is the path, relative to where the Server is mounted, under
// which it serves task at epoch: the worker's remote URL is the mount's URL
// followed by it (see TaskURL).
func TaskPath(task string, epoch uint64) string {
	return "task/" + task + "/" + strconv.FormatUint(epoch, 10)
}

// TaskURL joins base (the URL the Server is mounted at) and TaskPath.
func TaskURL(base, task string, epoch uint64) string {
	return strings.TrimSuffix(base, "/") + "/" + TaskPath(task, epoch)
}

// validName reports whether s is a safe path segment: letters, digits,
// '.', '_' and '-', not starting with '.' or '-'.
func validName(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validate checks a's names and that its repository is one, with the base
// branch a valid branch name.
func (a Assignment) validate(ctx context.Context) error {
	switch {
	case !validName(a.Task):
		return fmt.Errorf("assigning a task: task id %q is not a name of letters, digits, '.', '_' and '-'", a.Task)
	case !validName(a.Worker):
		return fmt.Errorf("assigning task %s: worker id %q is not a name of letters, digits, '.', '_' and '-'", a.Task, a.Worker)
	case a.Repo == "":
		return fmt.Errorf("assigning task %s: no repository", a.Task)
	case a.Base == "" || strings.HasPrefix(a.Base, "-") || strings.HasPrefix(a.Base, BranchPrefix):
		return fmt.Errorf("assigning task %s: %q is not a base branch", a.Task, a.Base)
	}
	if _, err := git.Run(ctx, a.Repo, "check-ref-format", "refs/heads/"+a.Base); err != nil {
		return fmt.Errorf("assigning task %s: %q is not a valid branch name", a.Task, a.Base)
	}
	if _, err := git.Run(ctx, a.Repo, "rev-parse", "--git-dir"); err != nil {
		var gerr *git.Error
		if errors.As(err, &gerr) {
			return fmt.Errorf("assigning task %s: %s is not a git repository: %s", a.Task, a.Repo, git.Stderr(err))
		}
		return fmt.Errorf("assigning task %s: %w", a.Task, err)
	}
	return nil
}
