package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// TestInjectionsOfTheUntypedFormat reads queue rows as the version before
// typed injections wrote them (urgency and outcome as plain attributes,
// the kind by name), checks that they are parsed into the typed fields,
// and that storing the parsed injections again writes the same columns:
// the format did not change, so neither did the schema.
func TestInjectionsOfTheUntypedFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neuraphage.db")
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := task.New("t-aaaaa", task.Spec{Description: "old rows"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	s.Close()

	type row struct {
		source, kind string
		attrs        sql.NullString
		urgent       int
	}
	some := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	old := []row{
		{"main-watcher", "rebase", some(`{"behind":"3","main":"main","main_commit":"abc1234","urgency":"blocking"}`), 1},
		{"main-watcher", "rebase", some(`{"outcome":"conflict","urgency":"blocking"}`), 0},
		{"user", "persona", some(`{"by":"user","from":"implementer","reason":"","to":"architect"}`), 0},
		{"syncer", "sync", some(`{"from":"t-bbbbb","learning":"7","urgency":"fyi"}`), 0},
		{"user", "nudge", some(`{"severity":"hint"}`), 0},
		{"user", "message", sql.NullString{}, 0},
		// A value this version does not know is kept as it is.
		{"main-watcher", "rebase", some(`{"urgency":"someday"}`), 0},
	}
	db, err := openDB(path, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range old {
		if _, err := db.ExecContext(ctx, `INSERT INTO injections (task_id, source, kind, attrs, text, urgent, created_at) VALUES (?, ?, ?, ?, 'x', ?, ?)`,
			string(tk.ID), r.source, r.kind, r.attrs, r.urgent, t0.UnixNano()); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Pending(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(id int64, src inject.Source, k inject.Kind, u inject.Urgency, o inject.Outcome, attrs map[string]string, urgent bool) inject.Injection {
		return inject.Injection{ID: id, TaskID: tk.ID, Source: src, Kind: k, Urgency: u, Outcome: o, Attrs: attrs, Text: "x", Urgent: urgent, CreatedAt: t0}
	}
	want := []inject.Injection{
		mk(1, inject.FromMainWatcher, inject.Rebase, inject.Blocking, "", map[string]string{"behind": "3", "main": "main", "main_commit": "abc1234"}, true),
		mk(2, inject.FromMainWatcher, inject.Rebase, inject.Blocking, inject.Conflict, nil, false),
		mk(3, inject.FromUser, inject.Persona, "", "", map[string]string{"by": "user", "from": "implementer", "reason": "", "to": "architect"}, false),
		mk(4, inject.FromSyncer, inject.Sync, inject.FYI, "", map[string]string{"from": "t-bbbbb", "learning": "7"}, false),
		mk(5, inject.FromUser, inject.Nudge, "", "", map[string]string{"severity": "hint"}, false),
		mk(6, inject.FromUser, inject.Message, "", "", nil, false),
		mk(7, inject.FromMainWatcher, inject.Rebase, "someday", "", nil, false),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Pending of old rows (-want +got):\n%s", diff)
	}
	if !got[0].IsBlockingRebase() || got[1].IsBlockingRebase() || !got[2].IsPersonaRequest() || got[6].IsBlockingRebase() {
		t.Error("the requests are not told from their outcomes")
	}

	// Stored again, they are written as they were.
	for _, inj := range got {
		inj.ID = 0
		if _, _, err := s.Enqueue(ctx, inj, nil); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT source, kind, attrs, urgent FROM injections WHERE id > ? ORDER BY id`, len(old))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var again []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.source, &r.kind, &r.attrs, &r.urgent); err != nil {
			t.Fatal(err)
		}
		again = append(again, r)
	}
	if diff := cmp.Diff(old, again, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("rows written again (-old +new):\n%s", diff)
	}
}
