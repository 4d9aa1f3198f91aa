package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// TestMigrateFrom1 upgrades a database written at schema 1, as the previous
// release left it, and checks that its data survives and the new features
// work on it.
func TestMigrateFrom1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neuraphage.db")
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

	db, err := openDB(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := applyMigration(ctx, db, 1, migrations[0]); err != nil {
		t.Fatal(err)
	}
	tk, err := task.New("t-aaaaa", task.Spec{Description: "made at schema 1", Tags: []string{"old"}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	args, err := taskArgs(tk)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO tasks (id, status, priority, parent_id, created_at, updated_at, data) VALUES (?, ?, ?, ?, ?, ?, ?)`, args[:7]},
		{`INSERT INTO injections (task_id, source, text, urgent, created_at) VALUES (?, 'user', 'still there?', 1, ?)`,
			[]any{string(tk.ID), t0.UnixNano()}},
	} {
		if _, err := db.ExecContext(ctx, stmt.q, stmt.args...); err != nil {
			t.Fatalf("writing schema 1 data: %v", err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("opening a schema 1 database: %v", err)
	}
	defer s.Close()
	var version int
	if err := s.rdb.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil || version != SchemaVersion() {
		t.Fatalf("schema version after Open = %d, %v; want %d", version, err, SchemaVersion())
	}
	got, err := s.GetTask(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tk, got); diff != "" {
		t.Errorf("task after migration (-want +got):\n%s", diff)
	}
	pending, err := s.Pending(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []inject.Injection{{ID: 1, TaskID: tk.ID, Source: "user", Kind: "message", Text: "still there?", Urgent: true, CreatedAt: t0}}
	if diff := cmp.Diff(want, pending); diff != "" {
		t.Errorf("queue after migration (-want +got):\n%s", diff)
	}

	// The old task and its old injection take part in a checkpoint.
	if _, _, err := s.Checkpoint(ctx, store.Checkpoint{
		TaskID: tk.ID, Entries: []store.Entry{{At: t0, Message: llm.UserText("still there?")}},
		Delivered: []int64{1}, DeliveredAt: t0,
		Charges: []store.Charge{{At: t0, Provider: "p", Model: "m", CostUSD: 0.5}},
	}); err != nil {
		t.Fatalf("checkpoint on migrated data: %v", err)
	}
	if n, err := s.ConversationLen(ctx, tk.ID); err != nil || n != 1 {
		t.Errorf("ConversationLen = %d, %v; want 1", n, err)
	}
	if usd, err := s.Spent(ctx, time.Time{}); err != nil || usd != 0.5 {
		t.Errorf("Spent = %v, %v; want 0.5", usd, err)
	}
	if p, err := s.Pending(ctx, tk.ID); err != nil || len(p) != 0 {
		t.Errorf("Pending after delivery = %v, %v; want empty", p, err)
	}
}

// TestMigrateTo7FillsListingColumns upgrades a database written at schema
// 6, whose tasks have no listing columns, and checks that migration 7 fills
// them with what the stored tasks say.
func TestMigrateTo7FillsListingColumns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neuraphage.db")
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

	db, err := openDB(path, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if err := applyMigration(ctx, db, i+1, migrations[i]); err != nil {
			t.Fatal(err)
		}
	}
	descs := []string{"plain", "two\nlines", strings.Repeat("long ", 100), "tabs\tand  spaces"}
	for i, d := range descs {
		tk, err := task.New(task.ID(fmt.Sprintf("t-%05d", i)), task.Spec{
			Description: d, Priority: i % 5, Persona: "senior", Engine: "native", Model: "sonnet", Hold: i%2 == 0,
		}, t0.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			start := t0.Add(time.Hour)
			tk.Status, tk.StartedAt, tk.ResumePending = task.Running, &start, true
			tk.Usage = task.Usage{Iterations: 4, InputTokens: 1234, OutputTokens: 56, CostUSD: 0.1 + 0.2}
		}
		if i == 3 {
			end := t0.Add(2 * time.Hour)
			tk.Status, tk.FinishedAt, tk.CloseReason = task.Failed, &end, "model error"
			tk.Usage.CostUSD = 7.123456789
		}
		args, err := taskArgs(tk)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO tasks (id, status, priority, parent_id, created_at, updated_at, data) VALUES (?, ?, ?, ?, ?, ?, ?)`, args[:7]...); err != nil {
			t.Fatalf("writing schema 6 data: %v", err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("opening a schema 6 database: %v", err)
	}
	defer s.Close()
	ts, err := s.ListTasks(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != len(descs) {
		t.Fatalf("%d tasks after migration, want %d", len(ts), len(descs))
	}
	want := make([]task.Summary, len(ts))
	for i, tk := range ts {
		want[i] = tk.Summarize()
	}
	got, err := s.ListSummaries(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listing after migration 7 (-stored tasks +columns):\n%s", diff)
	}
	raw, err := s.ListSummariesJSON(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var fromColumn []task.Summary
	if err := json.Unmarshal([]byte("["+string(raw.JSON)+"]"), &fromColumn); err != nil {
		t.Fatalf("listing column after migration 7: %v\n%s", err, raw.JSON)
	}
	if diff := cmp.Diff(want, fromColumn); diff != "" {
		t.Errorf("listing column after migration 7 (-stored tasks +column):\n%s", diff)
	}
}

// TestRefuseNewerSchema checks that a build does not open a database a newer
// build migrated: it would not know what the new columns mean.
func TestRefuseNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neuraphage.db")
	db, err := openDB(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(ctx, path, Options{}); err == nil {
		s.Close()
		t.Fatal("Open accepted a database of schema version 99")
	}
}
