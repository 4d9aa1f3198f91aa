package git_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// gathered creates refs[0] alone and, while its transaction is held, the
// other refs, which gather behind it; it returns each creation's error.
func gathered(t *testing.T, rc *git.RefCreator, dir, msg, commit string, refs []string) []error {
	t.Helper()
	first, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	rc.SetHeld(func() {
		once.Do(func() {
			close(first)
			<-release
		})
	})
	errs := make([]error, len(refs))
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = rc.Create(context.Background(), dir, msg, refs[0], commit) })
	<-first
	for i := 1; i < len(refs); i++ {
		wg.Go(func() { errs[i] = rc.Create(context.Background(), dir, msg, refs[i], commit) })
	}
	testkit.WaitFor(t, "the creations to gather", func() bool { return rc.Gathering(dir, msg) == len(refs)-1 })
	close(release)
	wg.Wait()
	return errs
}

// TestRefCreatorGathers: creations asked for while one runs go together
// in one transaction, each ref at its commit with the reflog message.
func TestRefCreatorGathers(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	c1 := rtHead(t, dir)
	msg := "branch: Created from " + c1
	var refs []string
	for i := range 8 {
		refs = append(refs, fmt.Sprintf("refs/heads/neuraphage/t-%d/work", i))
	}
	var rc git.RefCreator
	for i, err := range gathered(t, &rc, dir, msg, c1, refs) {
		if err != nil {
			t.Errorf("creating %s: %v", refs[i], err)
		}
	}
	if n := rc.Transactions(); n != 2 {
		t.Errorf("%d transactions for 8 refs, want 2 (the first alone, the others together)", n)
	}
	for _, ref := range refs {
		if tip := strings.TrimSpace(mustGit(t, dir, "rev-parse", ref)); tip != c1 {
			t.Errorf("%s at %s, want %s", ref, tip, c1)
		}
		if log := strings.TrimSpace(mustGit(t, dir, "reflog", "show", "--format=%gs", ref)); log != msg {
			t.Errorf("%s's reflog = %q, want %q", ref, log, msg)
		}
	}
	// A lone creation, later: at once, alone.
	if err := rc.Create(context.Background(), dir, msg, "refs/heads/later", c1); err != nil {
		t.Fatal(err)
	}
	if n := rc.Transactions(); n != 3 {
		t.Errorf("%d transactions after a lone creation, want 3", n)
	}
}

// TestRefCreatorOneTaken: a ref that exists fails its own creation only;
// the others gathered with it are made, and the existing one is untouched.
func TestRefCreatorOneTaken(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	c1 := rtHead(t, dir)
	c2 := rtCommit(t, dir, "2", map[string]string{"a": "2"})
	mustGit(t, dir, "branch", "taken", c2)
	msg := "branch: Created from " + c1
	refs := []string{"refs/heads/first", "refs/heads/x", "refs/heads/taken", "refs/heads/y"}
	var rc git.RefCreator
	errs := gathered(t, &rc, dir, msg, c1, refs)
	for i, err := range errs {
		if (err != nil) != (refs[i] == "refs/heads/taken") {
			t.Errorf("creating %s: %v", refs[i], err)
		}
	}
	if errs[2] != nil && !strings.Contains(errs[2].Error(), "taken") {
		t.Errorf("the error does not name the ref: %v", errs[2])
	}
	if tip := strings.TrimSpace(mustGit(t, dir, "rev-parse", "refs/heads/taken")); tip != c2 {
		t.Errorf("the existing branch moved to %s", tip)
	}
	for _, ref := range []string{"refs/heads/first", "refs/heads/x", "refs/heads/y"} {
		if tip := strings.TrimSpace(mustGit(t, dir, "rev-parse", ref)); tip != c1 {
			t.Errorf("%s at %s, want %s", ref, tip, c1)
		}
	}
	if err := rc.Create(context.Background(), dir, msg, "refs/heads/bad name", c1); err == nil {
		t.Error("a ref name with a space was accepted")
	}
}

// TestRefCreatorInsideLockedRunsAlone: a creation asked for while the
// caller holds the repository's lock (git.Locked) is made at once with
// the caller's context, not gathered behind a transaction that would need
// that lock.
func TestRefCreatorInsideLockedRunsAlone(t *testing.T) {
	t.Parallel()
	dir := repo(t, nil)
	c1 := rtHead(t, dir)
	msg := "branch: Created from " + c1
	var rc git.RefCreator
	first, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	rc.SetHeld(func() {
		once.Do(func() {
			close(first)
			<-release
		})
	})
	var wg sync.WaitGroup
	var heldErr error
	wg.Go(func() { heldErr = rc.Create(context.Background(), dir, msg, "refs/heads/held", c1) })
	<-first
	done := make(chan error, 1)
	go func() {
		done <- git.Locked(context.Background(), dir, func(ctx context.Context) error {
			return rc.Create(ctx, dir, msg, "refs/heads/locked", c1)
		})
	}()
	var lockedErr error
	testkit.WaitFor(t, "the creation inside Locked", func() bool {
		select {
		case lockedErr = <-done:
			return true
		default:
			return false
		}
	})
	close(release)
	wg.Wait()
	if lockedErr != nil || heldErr != nil {
		t.Fatalf("inside Locked: %v; held: %v", lockedErr, heldErr)
	}
	for _, ref := range []string{"refs/heads/held", "refs/heads/locked"} {
		if tip := strings.TrimSpace(mustGit(t, dir, "rev-parse", ref)); tip != c1 {
			t.Errorf("%s at %s, want %s", ref, tip, c1)
		}
	}
	if n := rc.Transactions(); n != 1 {
		t.Errorf("%d transactions, want 1 (the creation inside Locked is not one of them)", n)
	}
}
