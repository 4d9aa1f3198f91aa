package sqlite_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// A write that finds the database full fails with store.ErrFull, from
// SQLite's own SQLITE_FULL (a capped database fails exactly as one on a
// full disk), and succeeds once space returns.
func TestFullDatabaseIsErrFull(t *testing.T) {
	ctx := context.Background()
	s := testkit.OpenStore(t, sqlite.Options{})
	now := time.Now().UTC()
	tk, err := task.New("t-aaaaa", task.Spec{Description: "fill the disk", Repo: t.TempDir()}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	pages, err := s.PageCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetMaxPages(ctx, pages); err != nil {
		t.Fatal(err)
	}
	big := inject.Injection{TaskID: tk.ID, Text: strings.Repeat("full disk ", 20_000), CreatedAt: now}
	_, _, err = s.Enqueue(ctx, big, nil)
	if !errors.Is(err, store.ErrFull) {
		t.Fatalf("a write past the cap: error = %v, want store.ErrFull", err)
	}
	if _, err := s.SetMaxPages(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Enqueue(ctx, big, nil); err != nil {
		t.Fatalf("the same write once space returned: %v", err)
	}
}
