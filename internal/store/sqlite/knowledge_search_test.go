package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// searchCorpus stores learnings enough for ranking to mean something,
// and returns them by name.
func searchCorpus(t *testing.T, s *Store) map[string]store.Learning {
	t.Helper()
	out := map[string]store.Learning{}
	for i, c := range []struct {
		name, task, summary, detail string
		tags                        []string
	}{
		{"jwt", "t-aaaaa", "The JWT library rejected tokens without an iat claim", "seen in the auth middleware", []string{"auth", "jwt"}},
		{"docker", "t-aaaaa", "Integration tests need Docker running", "testcontainers starts postgres", []string{"ci"}},
		{"config", "t-aaaaa", "The config loader reads config/dev.yaml by default", "", []string{"config"}},
		{"generate", "t-aaaaa", "Run make generate before go build", "otherwise the protobuf stubs are missing", []string{"build"}},
		{"limiter", "t-aaaaa", "The rate limiter lives in internal/limit/bucket.go", "", []string{"performance"}},
		{"pnpm", "t-aaaaa", "Use pnpm, not npm, in the web directory", "", []string{"frontend"}},
		{"migrate", "t-aaaaa", "Migrations run with make migrate", "", []string{"database"}},
		{"logger", "t-aaaaa", "The logger must be injected, never global", "", []string{"logging"}},
		{"secret", "t-bbbbb", "JWT_SECRET must be set for go test ./auth", "", []string{"secrets"}},
		{"seed", "t-bbbbb", "Fixtures load with make seed", "", []string{"database"}},
		{"cors", "t-bbbbb", "The API server answers CORS preflight requests itself", "", []string{"http"}},
		{"flaky", "t-bbbbb", "TestWatcher is flaky under heavy load", "", []string{"tests"}},
	} {
		l := recordL(t, s, store.Learning{TaskID: task.ID(c.task), Summary: c.summary, Detail: c.detail, Tags: c.tags,
			CreatedAt: gitT0.Add(time.Duration(i) * time.Second)})
		if l.Merged {
			t.Fatalf("corpus learning %q merged into %d", c.summary, l.ID)
		}
		out[c.name] = l
	}
	return out
}

func TestSearchLearnings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openKnowledgeStore(t, "t-aaaaa", "t-bbbbb", "t-ccccc")
	c := searchCorpus(t, s)
	// t-ccccc is a second source of two learnings.
	recordL(t, s, store.Learning{TaskID: "t-ccccc", Summary: "Note: fixtures load with make seed.", CreatedAt: gitT0.Add(time.Hour)})
	recordL(t, s, store.Learning{TaskID: "t-ccccc", Summary: "the jwt library rejected tokens without an iat claim", CreatedAt: gitT0.Add(time.Hour)})
	ids := func(names ...string) []int64 {
		var out []int64
		for _, n := range names {
			out = append(out, c[n].ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		q    store.LearningQuery
		want []int64
		set  bool // compare as a set: the ranks are close
	}{
		{"word of a summary", store.LearningQuery{Search: "limiter"}, ids("limiter"), false},
		{"word of a detail", store.LearningQuery{Search: "protobuf"}, ids("generate"), false},
		{"word of a tag", store.LearningQuery{Search: "performance"}, ids("limiter"), false},
		{"a tag of two", store.LearningQuery{Search: "database"}, ids("migrate", "seed"), true},
		{"stemming", store.LearningQuery{Search: "rejects"}, ids("jwt"), false},
		{"stemming, other form", store.LearningQuery{Search: "rejecting"}, ids("jwt"), false},
		{"plural finds singular", store.LearningQuery{Search: "loggers"}, ids("logger"), false},
		{"case", store.LearningQuery{Search: "DOCKER"}, ids("docker"), false},
		{"best match first", store.LearningQuery{Search: "jwt iat claim rejected"}, ids("jwt", "secret"), false},
		{"any word", store.LearningQuery{Search: "make migrate"}, ids("generate", "migrate", "seed"), true},
		{"best match first, limited", store.LearningQuery{Search: "make migrate", Limit: 1}, ids("migrate"), false},
		{"after", store.LearningQuery{Search: "make", AfterID: c["generate"].ID}, ids("migrate", "seed"), true},
		{"one task's", store.LearningQuery{Search: "make", TaskID: "t-bbbbb"}, ids("seed"), false},
		{"a further source's", store.LearningQuery{Search: "make", TaskID: "t-ccccc"}, ids("seed"), false},
		{"a further source's, no search", store.LearningQuery{TaskID: "t-ccccc"}, ids("jwt", "seed"), false},
		{"a first source's, no search", store.LearningQuery{TaskID: "t-bbbbb"}, ids("secret", "seed", "cors", "flaky"), false},
		{"no match", store.LearningQuery{Search: "kubernetes"}, nil, false},
	} {
		got, err := s.Learnings(ctx, tc.q)
		if err != nil {
			t.Errorf("%s: Learnings(%+v): %v", tc.name, tc.q, err)
			continue
		}
		gotIDs := learningIDs(got)
		if tc.set {
			slices.Sort(gotIDs)
			slices.Sort(tc.want)
		}
		if diff := cmp.Diff(tc.want, gotIDs, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: Learnings(%+v) ids (-want +got):\n%s", tc.name, tc.q, diff)
		}
	}
	// Found learnings come whole, with their sources.
	got, err := s.Learnings(ctx, store.LearningQuery{Search: "iat"})
	if err != nil || len(got) != 1 {
		t.Fatalf("Learnings(iat) = %+v, %v", got, err)
	}
	want, err := s.GetLearning(ctx, c["jwt"].ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got[0]); diff != "" || len(want.Sources) != 2 {
		t.Errorf("a found learning differs from GetLearning (-get +search):\n%s", diff)
	}
}

// TestSearchLearningsOddQueries feeds the search what users and models
// type: FTS5 syntax must never reach the engine as syntax.
func TestSearchLearningsOddQueries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openKnowledgeStore(t, "t-aaaaa", "t-bbbbb")
	c := searchCorpus(t, s)
	for _, tc := range []struct {
		queries []string
		findJWT bool
	}{
		{[]string{`"`, `""`, `*`, `NEAR(`, `-`, `:`, `AND`, `)`, `(`, `^`, `+`, `{`, `}`, `'`, `\`, `;`, `%`, `_`,
			`tags:auth`, `x-request-id`, `src/auth/jwt.go:12`, `col:`, `rowid:1`, `learnings_fts`, `a"b"c`, "jwt\x00iat",
			"\xff\xfe", `ñandú`, `日本語`, `🙂`, strings.Repeat("(", 100), `NOT`, `OR`, `NEAR`, `*:*`}, false},
		{[]string{`jwt"`, `"jwt`, `jwt*`, `*jwt`, `NEAR(jwt iat)`, `NEAR(jwt`, `-jwt`, `jwt -docker`, `summary:jwt`,
			`jwt AND`, `AND jwt`, `jwt OR`, `NOT jwt`, `jwt NOT`, `jwt)`, `(jwt`, `^jwt`, `{summary detail}: jwt`, `jwt + iat`,
			`"jwt" AND "iat"`, `jwt:`, `JWT's`, strings.Repeat("jwt ", 200)}, true},
	} {
		for _, q := range tc.queries {
			got, err := s.Learnings(ctx, store.LearningQuery{Search: q})
			if err != nil {
				t.Errorf("Learnings(Search: %q): %v", q, err)
				continue
			}
			if tc.findJWT && !slices.Contains(learningIDs(got), c["jwt"].ID) {
				t.Errorf("Learnings(Search: %q) = %v; want it to find learning %d", q, learningIDs(got), c["jwt"].ID)
			}
		}
	}
	// With no words left to look for, the search finds nothing.
	for _, q := range []string{"the", "the of and", "AND OR", `"`, `*`, `-`, `:`, `)`, "?!", "()"} {
		if got, err := s.Learnings(ctx, store.LearningQuery{Search: q}); err != nil || len(got) != 0 {
			t.Errorf("Learnings(Search: %q) = %v, %v; want nothing", q, learningIDs(got), err)
		}
	}
	// Recording such text deduplicates without error too.
	for _, summary := range []string{`NEAR( "jwt" * - : AND )`, `"`, `AND OR NOT`, `col: "x" OR y*`} {
		if _, _, err := s.RecordLearning(ctx, store.Learning{TaskID: "t-aaaaa", Summary: summary, CreatedAt: gitT0}, nil); err != nil {
			t.Errorf("RecordLearning(%q): %v", summary, err)
		}
	}
}

// TestSearchLearningsBlankQuery gives Search only spaces: not an error.
func TestSearchLearningsBlankQuery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openKnowledgeStore(t, "t-aaaaa")
	recordL(t, s, store.Learning{TaskID: "t-aaaaa", Summary: "gofmt runs in CI", CreatedAt: gitT0})
	for _, q := range []string{" ", "\t\n"} {
		if _, err := s.Learnings(ctx, store.LearningQuery{Search: q}); err != nil {
			t.Errorf("Learnings(Search: %q): %v", q, err)
		}
	}
}

func TestGetAndForgetLearning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, log := openKnowledgeStore(t, "t-aaaaa", "t-bbbbb")
	jwt := recordL(t, s, store.Learning{TaskID: "t-aaaaa", Summary: "The JWT library rejects tokens without an iat claim",
		Detail: "seen in the auth middleware", Tags: []string{"auth"}, Files: []string{"internal/auth/jwt.go"}, CreatedAt: gitT0})
	jwt = recordL(t, s, store.Learning{TaskID: "t-bbbbb", Summary: "Note: the JWT library rejects tokens without an iat claim.", CreatedAt: gitT0.Add(time.Minute)})
	other := recordL(t, s, store.Learning{TaskID: "t-aaaaa", Summary: "gofmt runs in CI", CreatedAt: gitT0})

	got, err := s.GetLearning(ctx, jwt.ID)
	if err != nil {
		t.Fatal(err)
	}
	jwt.Merged = false
	if diff := cmp.Diff(jwt, got); diff != "" || len(got.Sources) != 2 {
		t.Errorf("GetLearning (-recorded +got):\n%s", diff)
	}
	for _, id := range []int64{0, -1, other.ID + 100} {
		if _, err := s.GetLearning(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetLearning(%d) error = %v; want ErrNotFound", id, err)
		}
	}

	msg := store.SyncMessage{LearningID: jwt.ID, From: "t-aaaaa", TaskID: "t-bbbbb", Urgency: "helpful", Message: "m",
		DecidedBy: "rules", State: store.SyncQueued, CreatedAt: gitT0}
	msg, _, err = s.AddSyncMessage(ctx, msg, nil)
	if err != nil {
		t.Fatal(err)
	}

	var forgotten store.Learning
	record := func(l store.Learning) []event.Event {
		forgotten = l
		return []event.Event{event.New(gitT0, "", event.KnowledgeForgot{LearningID: l.ID, Summary: l.Summary})}
	}
	out, evs, err := s.ForgetLearning(ctx, jwt.ID, record)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jwt, out); diff != "" {
		t.Errorf("ForgetLearning returned (-stored +got):\n%s", diff)
	}
	if diff := cmp.Diff(jwt, forgotten); diff != "" {
		t.Errorf("ForgetLearning's record saw (-stored +got):\n%s", diff)
	}
	if len(evs) != 1 || evs[0].ID <= 0 || !cmp.Equal(evs[0].Payload, event.KnowledgeForgot{LearningID: jwt.ID, Summary: jwt.Summary}) {
		t.Errorf("ForgetLearning events = %+v", evs)
	}
	if pub := log.all(); len(pub) == 0 || pub[len(pub)-1].ID != evs[0].ID {
		t.Errorf("the forgetting event was not published: %+v", pub)
	}
	if _, err := s.GetLearning(ctx, jwt.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLearning of a forgotten learning: %v; want ErrNotFound", err)
	}
	var n int
	if err := s.rdb.QueryRow(`SELECT count(*) FROM learning_sources WHERE learning_id = ?`, jwt.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("the forgotten learning keeps %d sources (%v)", n, err)
	}
	for _, q := range []store.LearningQuery{{Search: "jwt"}, {Search: "middleware"}, {Search: "auth"}, {TaskID: "t-bbbbb"}} {
		if ls, err := s.Learnings(ctx, q); err != nil || len(ls) != 0 {
			t.Errorf("Learnings(%+v) after forgetting = %v, %v; want nothing", q, learningIDs(ls), err)
		}
	}
	if diff := cmp.Diff([]store.Learning{other}, allLearnings(t, s)); diff != "" {
		t.Errorf("the other learning (-want +got):\n%s", diff)
	}
	if ms, err := s.SyncMessages(ctx, store.SyncQuery{LearningID: jwt.ID}); err != nil || len(ms) != 1 || ms[0].ID != msg.ID {
		t.Errorf("sync messages of the forgotten learning = %+v, %v; want message %d kept", ms, err, msg.ID)
	}

	published := len(log.all())
	if _, evs, err := s.ForgetLearning(ctx, jwt.ID, record); !errors.Is(err, store.ErrNotFound) || len(evs) != 0 {
		t.Errorf("forgetting twice = %v, %v; want ErrNotFound", evs, err)
	}
	if n := len(log.all()); n != published {
		t.Errorf("forgetting twice published %d events", n-published)
	}

	// The same discovery made again is a new learning.
	again := recordL(t, s, store.Learning{TaskID: "t-bbbbb", Summary: "The JWT library rejects tokens without an iat claim", CreatedAt: gitT0.Add(time.Hour)})
	if again.Merged || again.ID <= other.ID || len(again.Sources) != 1 {
		t.Errorf("recording a forgotten learning again = id %d, merged %t, %d sources; want a new learning", again.ID, again.Merged, len(again.Sources))
	}
	s.Close()
	checkFTS(t, s.Path())
}

// TestMigrateFrom3 upgrades a database at schema 3 that holds learnings:
// each becomes a searchable learning with its task as its one source.
func TestMigrateFrom3(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "neuraphage.db")
	db, err := openDB(path, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := applyMigration(ctx, db, i+1, migrations[i]); err != nil {
			t.Fatal(err)
		}
	}
	tk, err := task.New("t-aaaaa", task.Spec{Description: "made at schema 3"}, gitT0)
	if err != nil {
		t.Fatal(err)
	}
	args, err := taskArgs(tk)
	if err != nil {
		t.Fatal(err)
	}
	t1 := gitT0.Add(time.Minute)
	for _, stmt := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO tasks (id, status, priority, parent_id, created_at, updated_at, data) VALUES (?, ?, ?, ?, ?, ?, ?)`, args[:7]},
		{`INSERT INTO learnings (task_id, summary, detail, tags, created_at) VALUES (?, ?, ?, ?, ?)`,
			[]any{"t-aaaaa", "The JWT library rejects tokens without an iat claim", "seen in the auth middleware", `["auth","jwt"]`, gitT0.UnixNano()}},
		{`INSERT INTO learnings (task_id, summary, detail, tags, created_at) VALUES (?, ?, '', NULL, ?)`,
			[]any{"t-gone0", "gofmt runs in CI", t1.UnixNano()}},
	} {
		if _, err := db.ExecContext(ctx, stmt.q, stmt.args...); err != nil {
			t.Fatalf("writing schema 3 data: %v", err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("opening a schema 3 database: %v", err)
	}
	defer s.Close()
	var version int
	if err := s.rdb.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil || version != SchemaVersion() {
		t.Fatalf("schema version after Open = %d, %v; want %d", version, err, SchemaVersion())
	}
	want := []store.Learning{
		{ID: 1, TaskID: "t-aaaaa", Kind: "explicit", Summary: "The JWT library rejects tokens without an iat claim",
			Detail: "seen in the auth middleware", Tags: []string{"auth", "jwt"}, CreatedAt: gitT0, UpdatedAt: gitT0,
			Sources: []store.LearningSource{{TaskID: "t-aaaaa", Kind: "explicit", At: gitT0}}},
		{ID: 2, TaskID: "t-gone0", Kind: "explicit", Summary: "gofmt runs in CI", CreatedAt: t1, UpdatedAt: t1,
			Sources: []store.LearningSource{{TaskID: "t-gone0", Kind: "explicit", At: t1}}},
	}
	if diff := cmp.Diff(want, allLearnings(t, s)); diff != "" {
		t.Errorf("learnings after migration (-want +got):\n%s", diff)
	}
	for _, q := range []string{"rejected", "middleware", "auth", "jwt"} {
		if ls, err := s.Learnings(ctx, store.LearningQuery{Search: q}); err != nil || !slices.Equal(learningIDs(ls), []int64{1}) {
			t.Errorf("Learnings(Search: %q) after migration = %v, %v; want [1]", q, learningIDs(ls), err)
		}
	}
	if ls, err := s.Learnings(ctx, store.LearningQuery{TaskID: "t-gone0"}); err != nil || !slices.Equal(learningIDs(ls), []int64{2}) {
		t.Errorf("Learnings(TaskID: t-gone0) = %v, %v; want [2]", learningIDs(ls), err)
	}

	// An old learning (stored without a fingerprint) still takes a further
	// source; new ones do not reuse its ID.
	createGitTask(t, s, "t-bbbbb")
	merged, _, err := s.RecordLearning(ctx, store.Learning{TaskID: "t-bbbbb", Summary: "The JWT library rejects tokens without an iat claim.",
		Tags: []string{"tokens"}, CreatedAt: t1}, nil)
	if err != nil || merged.ID != 1 || !merged.Merged || len(merged.Sources) != 2 {
		t.Errorf("recording an old learning again = %+v, %v; want learning 1 with two sources", merged, err)
	}
	fresh := recordL(t, s, store.Learning{TaskID: "t-bbbbb", Summary: "The API server answers CORS preflight itself", CreatedAt: t1})
	if fresh.ID != 3 {
		t.Errorf("a new learning after migration has id %d; want 3", fresh.ID)
	}
	if ls, err := s.Learnings(ctx, store.LearningQuery{Search: "tokens"}); err != nil || !slices.Equal(learningIDs(ls), []int64{1}) {
		t.Errorf("Learnings(Search: tokens) = %v, %v; want [1]", learningIDs(ls), err)
	}
	if _, _, err := s.ForgetLearning(ctx, 2, nil); err != nil {
		t.Errorf("forgetting a migrated learning: %v", err)
	}
	s.Close()
	checkFTS(t, path)
}
