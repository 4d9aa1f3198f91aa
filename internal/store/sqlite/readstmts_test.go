package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// TestReadsPreparedOnce: a read's statement is prepared on first use and
// the same prepared statement serves every later call; a text that does
// not prepare runs unprepared and its error reaches the caller; past the
// bound, texts run unprepared and still answer; after Close a read fails
// instead of running.
func TestReadsPreparedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "neuraphage.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tk, err := task.New("t-aaaaa", task.Spec{Description: "x"}, time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	// prepared returns query's cache entry: seen says whether it has one,
	// st is nil when it did not prepare.
	prepared := func(query string) (st *sql.Stmt, seen bool) {
		s.reads.mu.RLock()
		defer s.reads.mu.RUnlock()
		st, seen = s.reads.m[query]
		return st, seen
	}
	const getTask = `SELECT data FROM tasks WHERE id = ?`
	if _, seen := prepared(getTask); seen {
		t.Fatalf("%q prepared before any read", getTask)
	}
	if _, err := s.GetTask(ctx, tk.ID); err != nil {
		t.Fatal(err)
	}
	first, _ := prepared(getTask)
	if first == nil {
		t.Fatalf("%q not prepared after a read", getTask)
	}
	for range 3 {
		if _, err := s.GetTask(ctx, tk.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetTask(ctx, "t-bbbbb"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an unknown task read as %v", err)
		}
	}
	if again, _ := prepared(getTask); again != first {
		t.Errorf("%q prepared again", getTask)
	}

	const bad = `SELECT nosuchcolumn FROM tasks`
	for range 2 {
		if err := s.reads.QueryRowContext(ctx, bad).Scan(new(string)); err == nil || !strings.Contains(err.Error(), "nosuchcolumn") {
			t.Fatalf("a bad query read as %v", err)
		}
	}
	if st, seen := prepared(bad); !seen || st != nil {
		t.Errorf("a text that does not prepare is not remembered as such (seen %v)", seen)
	}

	for i := range maxReadPrepared + 10 {
		var n int
		q := `SELECT ? -- ` + strings.Repeat("x", i)
		if err := s.reads.QueryRowContext(ctx, q, i).Scan(&n); err != nil || n != i {
			t.Fatalf("read %d: %d, %v", i, n, err)
		}
	}
	s.reads.mu.RLock()
	n := len(s.reads.m)
	s.reads.mu.RUnlock()
	if n > maxReadPrepared {
		t.Errorf("%d statements prepared, more than the bound %d", n, maxReadPrepared)
	}

	s.Close()
	if _, err := s.GetTask(ctx, tk.ID); err == nil {
		t.Error("a read after Close succeeded")
	}
}

// TestReadsConcurrent: readers that prepare the same texts at once, on
// every connection of the pool, while the writer writes, all get their
// answers, and every text they ran ends prepared.
func TestReadsConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "neuraphage.db"), Options{ReadConns: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tk, err := task.New("t-aaaaa", task.Spec{Description: "x"}, time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	wg.Go(func() {
		for i := range 50 {
			if _, _, err := s.UpdateTask(ctx, tk.ID, func(t *task.Task) ([]event.Event, error) {
				t.Usage.Iterations = i
				return nil, nil
			}); err != nil {
				errs <- err
				return
			}
		}
	})
	for range 6 {
		wg.Go(func() {
			for range 50 {
				if _, err := s.GetTask(ctx, tk.ID); err != nil {
					errs <- err
					return
				}
				if _, err := s.ConversationLen(ctx, tk.ID); err != nil {
					errs <- err
					return
				}
				if ts, err := s.ListSummaries(ctx, store.ListOptions{Limit: 5}); err != nil || len(ts) != 1 {
					errs <- fmt.Errorf("listing: %d tasks, %v", len(ts), err)
					return
				}
				if _, err := s.Counts(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s.reads.mu.RLock()
	defer s.reads.mu.RUnlock()
	for q, st := range s.reads.m {
		if st == nil {
			t.Errorf("%q did not prepare", q)
		}
	}
}
