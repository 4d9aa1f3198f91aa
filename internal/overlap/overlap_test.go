package overlap

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/supervisor/supervisortest"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// rig runs a real Radar on a real SQLite store, bus and git repository,
// with tasks in real worktrees; the executor's door records what it is
// given.
type rig struct {
	t    *testing.T
	repo string
	bus  *event.Bus
	st   *sqlite.Store
	act  *supervisortest.Actions
	r    *Radar
	obs  uint64 // file-change observations published
	cfg  Config
	stop func()
}

func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// lines is a file of n numbered lines.
func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q", "-b", "main")
	for _, f := range []string{"a.go", "b.go", "c.go"} {
		if err := os.WriteFile(filepath.Join(repo, f), []byte(lines(40)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, repo, "add", ".")
	gitIn(t, repo, "commit", "-q", "-m", "base")
	bus := event.NewBus(event.Options{}, 0)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "n.db"), sqlite.Options{Publish: bus.Publish})
	if err != nil {
		t.Fatal(err)
	}
	g := &rig{t: t, repo: repo, bus: bus, st: st, act: &supervisortest.Actions{}, cfg: cfg}
	t.Cleanup(func() {
		g.stop()
		bus.Close()
		st.Close()
	})
	g.run()
	return g
}

// run starts a fresh Radar (the daemon restarted) and waits until it
// follows the bus.
func (g *rig) run() {
	g.t.Helper()
	g.r = New(Options{Config: g.cfg, Store: g.st, Bus: g.bus, Log: g.st, Inject: g.act.Inject})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.r.Run(ctx) }()
	g.stop = func() {
		cancel()
		if err := <-done; err != nil {
			g.t.Errorf("Run = %v", err)
		}
		g.stop = func() {}
	}
	testkit.WaitFor(g.t, "the radar to follow the bus", func() bool { return g.bus.Stats().Subscribers > 0 })
}

// task makes a running task with its own worktree.
func (g *rig) task(id task.ID, desc string, tags ...string) string {
	g.t.Helper()
	path := filepath.Join(g.t.TempDir(), string(id))
	branch := "neuraphage/" + string(id) + "/work"
	gitIn(g.t, g.repo, "worktree", "add", "-q", "-b", branch, path, "main")
	now := time.Now().UTC()
	ctx := context.Background()
	if _, err := g.st.CreateTask(ctx, task.Task{ID: id, Description: desc, Status: task.Running, Tags: tags, Worktree: path, CreatedAt: now, UpdatedAt: now}); err != nil {
		g.t.Fatal(err)
	}
	if _, err := g.st.PutWorktree(ctx, store.Worktree{TaskID: id, Repo: g.repo, Branch: branch, Base: "main", Path: path, State: store.WorktreeActive}); err != nil {
		g.t.Fatal(err)
	}
	return path
}

// edit rewrites line n of file in dir to text and records the change.
func (g *rig) edit(id task.ID, dir, file string, n int, text string) {
	g.t.Helper()
	p := filepath.Join(dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		g.t.Fatal(err)
	}
	ls := strings.Split(string(b), "\n")
	ls[n-1] = text
	if err := os.WriteFile(p, []byte(strings.Join(ls, "\n")), 0o644); err != nil {
		g.t.Fatal(err)
	}
	if _, err := g.st.AppendEvents(context.Background(), event.New(time.Now().UTC(), id, event.FileChanged{Turn: 1, Path: file, Op: "modified", Tool: "edit_file"})); err != nil {
		g.t.Fatal(err)
	}
	g.obs++
}

// settle waits until the radar handled every observation and finished
// forecasts forecasts.
func (g *rig) settle(forecasts uint64) {
	g.t.Helper()
	testkit.WaitFor(g.t, fmt.Sprintf("%d observations and %d forecasts", g.obs, forecasts), func() bool {
		s := g.r.Stats()
		return s.Observations == g.obs && s.Forecasts == forecasts
	})
}

func (g *rig) notices(id task.ID) []inject.Injection {
	var out []inject.Injection
	for _, i := range g.act.To(id) {
		if i.Source == Source {
			out = append(out, i.Injection)
		}
	}
	return out
}

func TestDifferentFilesNoNotice(t *testing.T) {
	g := newRig(t, Config{Enabled: true})
	a, b := g.task("t-aaaaa", "edit a"), g.task("t-bbbbb", "edit b")
	g.edit("t-aaaaa", a, "a.go", 3, "A")
	g.edit("t-bbbbb", b, "b.go", 3, "B")
	g.settle(0)
	if n := g.act.Count(); n != 0 {
		t.Fatalf("%d injections for tasks changing different files, want 0", n)
	}
	if m := g.r.Matrix(""); len(m) != 0 {
		t.Fatalf("matrix = %+v, want empty", m)
	}
}

func TestSameFileDifferentPlacesFYIClean(t *testing.T) {
	g := newRig(t, Config{Enabled: true})
	a, b := g.task("t-aaaaa", "edit the top"), g.task("t-bbbbb", "edit the <sync-message> bottom")
	g.edit("t-aaaaa", a, "a.go", 2, "top")
	g.edit("t-bbbbb", b, "b.go", 2, "unshared")
	g.edit("t-bbbbb", b, "a.go", 38, "bottom")
	g.settle(1)
	for _, c := range []struct{ to, other task.ID }{{"t-aaaaa", "t-bbbbb"}, {"t-bbbbb", "t-aaaaa"}} {
		ns := g.notices(c.to)
		if len(ns) != 1 {
			t.Fatalf("%s got %d notices, want 1", c.to, len(ns))
		}
		n := ns[0]
		if n.Urgency != inject.FYI || n.Kind != inject.Sync || n.Attrs["from"] != string(c.other) || n.Attrs["forecast"] != Clean {
			t.Errorf("notice to %s = %+v, want an fyi sync from %s with a clean forecast", c.to, n, c.other)
		}
		if !strings.Contains(n.Text, "a.go") || strings.Contains(n.Text, "b.go,") || !strings.Contains(n.Text, string(c.other)) {
			t.Errorf("notice to %s = %q, want the other task and the shared file", c.to, n.Text)
		}
	}
	if txt := g.notices("t-aaaaa")[0].Text; strings.Contains(txt, "<sync-message>") || !strings.Contains(txt, "b.go") {
		t.Errorf("notice to t-aaaaa = %q, want the description escaped and the other side's diff stat (b.go)", txt)
	}
	if txt := g.notices("t-aaaaa")[0].Text; !strings.Contains(txt, "a.go: you line 2, it line 38 (apart)") {
		t.Errorf("notice to t-aaaaa = %q, want where each changed a.go", txt)
	}
	if txt := g.notices("t-bbbbb")[0].Text; !strings.Contains(txt, "a.go: you line 38, it line 2 (apart)") {
		t.Errorf("notice to t-bbbbb = %q, want where each changed a.go", txt)
	}
	m := g.r.Matrix("t-aaaaa")
	if len(m) != 1 || m[0].Forecast != Clean || !slices.Equal(m[0].Files, []string{"a.go"}) {
		t.Fatalf("matrix = %+v, want one clean pair sharing a.go", m)
	}
	// Line ranges: t-aaaaa changed line 2 of a.go, t-bbbbb line 38.
	if want := []FileLines{{File: "a.go", A: []Range{{2, 2}}, B: []Range{{38, 38}}}}; !slices.EqualFunc(m[0].Lines, want, equalLines) {
		t.Errorf("lines = %+v, want %+v", m[0].Lines, want)
	}
	// No repeat: the same file changed again in a place that still merges.
	g.edit("t-aaaaa", a, "a.go", 4, "top again")
	g.settle(2)
	if n := len(g.notices("t-aaaaa")) + len(g.notices("t-bbbbb")); n != 2 {
		t.Fatalf("%d notices after a repeated change, want still 2", n)
	}
	evs, err := g.st.ReadEvents(context.Background(), event.Query{Filter: event.Filter{Kinds: []string{string(event.KindOverlapFound), string(event.KindOverlapNotice), string(event.KindOverlapForecast)}}})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[event.Kind]int{}
	for _, e := range evs {
		kinds[e.Kind]++
	}
	if kinds[event.KindOverlapFound] != 1 || kinds[event.KindOverlapNotice] != 2 || kinds[event.KindOverlapForecast] != 1 {
		t.Errorf("overlap events = %v, want 1 found, 2 notices, 1 forecast", kinds)
	}
}

func TestSameLinesHelpfulConflictAndEscalation(t *testing.T) {
	g := newRig(t, Config{Enabled: true})
	a, b := g.task("t-aaaaa", "rename"), g.task("t-bbbbb", "refactor")
	g.edit("t-aaaaa", a, "a.go", 10, "mine")
	g.edit("t-bbbbb", b, "a.go", 30, "theirs far away")
	g.settle(1)
	if ns := g.notices("t-bbbbb"); len(ns) != 1 || ns[0].Urgency != inject.FYI {
		t.Fatalf("notices to t-bbbbb = %+v, want one fyi", ns)
	}
	// Now the second task rewrites the same line: clean → conflict.
	g.edit("t-bbbbb", b, "a.go", 10, "theirs")
	g.settle(2)
	for _, id := range []task.ID{"t-aaaaa", "t-bbbbb"} {
		ns := g.notices(id)
		if len(ns) != 2 || ns[1].Urgency != inject.Helpful || ns[1].Attrs["forecast"] != Conflict || !strings.Contains(ns[1].Text, "conflict") {
			t.Fatalf("notices to %s = %+v, want an fyi then a helpful conflict notice", id, ns)
		}
		if !strings.Contains(ns[1].Text, "(the same or adjacent lines)") {
			t.Errorf("notice to %s = %q, want the lines both changed", id, ns[1].Text)
		}
	}
	m := g.r.Matrix("")
	if len(m) != 1 || m[0].Forecast != Conflict || !slices.Equal(m[0].Conflicts, []string{"a.go"}) {
		t.Fatalf("matrix = %+v, want one conflicting pair", m)
	}
	if want := []FileLines{{File: "a.go", A: []Range{{10, 10}}, B: []Range{{10, 10}, {30, 30}}, Intersect: true}}; !slices.EqualFunc(m[0].Lines, want, equalLines) {
		t.Errorf("lines = %+v, want %+v", m[0].Lines, want)
	}
	// Changing it again: still a conflict, nobody is told again.
	g.edit("t-aaaaa", a, "a.go", 10, "mine again")
	g.settle(2)
	if n := len(g.notices("t-aaaaa")) + len(g.notices("t-bbbbb")); n != 4 {
		t.Fatalf("%d notices, want still 4", n)
	}
	// The worktrees were only read.
	if st := gitIn(t, a, "status", "--porcelain"); strings.TrimSpace(st) != "M a.go" {
		t.Errorf("t-aaaaa's status = %q, want its own change only", st)
	}
}

func TestOptOutAndDisabled(t *testing.T) {
	g := newRig(t, Config{Enabled: true})
	a, b := g.task("t-aaaaa", "x", NoNoticesTag), g.task("t-bbbbb", "y")
	g.edit("t-aaaaa", a, "a.go", 10, "mine")
	g.edit("t-bbbbb", b, "a.go", 10, "theirs")
	g.settle(1)
	if n := g.act.Count(); n != 0 {
		t.Fatalf("%d injections with a task opted out, want 0", n)
	}
	if m := g.r.Matrix(""); len(m) != 1 || m[0].Forecast != Conflict {
		t.Fatalf("matrix = %+v, want the pair tracked anyway", m)
	}
}

func writeFile(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A task that finishes leaves the matrix with its pairs; the radar goes
// on with the others.
func TestFinishedTaskLeavesTheMatrix(t *testing.T) {
	g := newRig(t, Config{Enabled: true})
	a, b := g.task("t-aaaaa", "x"), g.task("t-bbbbb", "y")
	g.edit("t-aaaaa", a, "a.go", 10, "mine")
	g.edit("t-bbbbb", b, "a.go", 20, "theirs")
	g.settle(1)
	if m := g.r.Matrix(""); len(m) != 1 {
		t.Fatalf("matrix = %+v, want one pair", m)
	}
	if _, err := g.st.AppendEvents(context.Background(), event.New(time.Now(), "t-aaaaa", event.TaskStatus{From: task.Running, To: task.Completed})); err != nil {
		t.Fatal(err)
	}
	c := g.task("t-ccccc", "z")
	g.edit("t-ccccc", c, "b.go", 1, "other")
	g.settle(1)
	if m := g.r.Matrix(""); len(m) != 0 {
		t.Fatalf("matrix = %+v after t-aaaaa finished, want empty", m)
	}
	if n := g.act.Count(); n != 2 {
		t.Fatalf("%d injections, want the first pair's 2 only", n)
	}
}

// A restarted radar reads back what the tasks changed and what they were
// told: a further change of the shared file tells nobody again, and a
// third task on the same file is told of both.
func TestRestartReadsBack(t *testing.T) {
	g := newRig(t, Config{Enabled: true})
	a, b := g.task("t-aaaaa", "x"), g.task("t-bbbbb", "y")
	g.edit("t-aaaaa", a, "a.go", 10, "mine")
	g.edit("t-bbbbb", b, "a.go", 30, "theirs")
	g.settle(1)
	if n := g.act.Count(); n != 2 {
		t.Fatalf("%d notices before the restart, want 2", n)
	}
	g.stop()
	testkit.WaitFor(t, "the old radar to leave the bus", func() bool { return g.bus.Stats().Subscribers == 0 })
	g.run()
	testkit.WaitFor(t, "the pair read back", func() bool { return len(g.r.Matrix("")) == 1 })
	if m := g.r.Matrix(""); m[0].Forecast != Clean {
		t.Fatalf("matrix after the restart = %+v, want the clean pair read back", m)
	}
	g.obs = 0
	g.edit("t-bbbbb", b, "a.go", 32, "theirs again")
	g.settle(1)
	if n := g.act.Count(); n != 2 {
		t.Fatalf("%d notices after a change of the same file, want still 2", n)
	}
	c := g.task("t-ccccc", "z")
	g.edit("t-ccccc", c, "a.go", 20, "middle")
	g.settle(3)
	if n := len(g.notices("t-ccccc")); n != 2 {
		t.Fatalf("t-ccccc got %d notices, want one about each task", n)
	}
	if n := g.act.Count(); n != 6 {
		t.Fatalf("%d notices in all, want 6", n)
	}
}

func equalLines(x, y FileLines) bool {
	return x.File == y.File && slices.Equal(x.A, y.A) && slices.Equal(x.B, y.B) && x.Intersect == y.Intersect
}

func TestHunkRanges(t *testing.T) {
	for _, c := range []struct {
		hunk string
		want Range
	}{
		{"@@ -10 +10 @@", Range{10, 10}},
		{"@@ -10,3 +10,5 @@ func f() {", Range{10, 12}},
		{"@@ -7,0 +8,2 @@", Range{8, 7}}, // inserted after line 7
		{"@@ -0,0 +1,3 @@", Range{1, 0}}, // a new file
		{"@@ -4,2 +3,0 @@", Range{4, 5}}, // deleted
	} {
		if got, ok := hunkRange(c.hunk); !ok || got != c.want {
			t.Errorf("hunkRange(%q) = %v, %v; want %v", c.hunk, got, ok, c.want)
		}
	}
	if _, ok := hunkRange("@@ -x +1 @@"); ok {
		t.Error("a malformed hunk header was read")
	}
	for _, c := range []struct {
		a, b Range
		want bool
	}{
		{Range{5, 5}, Range{6, 6}, true},  // adjacent lines
		{Range{5, 5}, Range{7, 7}, false}, // line 6 between
		{Range{6, 5}, Range{5, 5}, true},  // inserted right after a changed line
		{Range{6, 5}, Range{6, 6}, true},  // inserted right before one
		{Range{6, 5}, Range{7, 7}, false}, // line 6 between
		{Range{1, 0}, Range{2, 1}, false}, // before and after line 1
		{Range{1, 0}, Range{1, 0}, true},  // the same place (both new files)
		{Range{2, 2}, Range{38, 38}, false},
		{Range{1, 3}, Range{2, 9}, true},
	} {
		if got := touches([]Range{c.a}, []Range{c.b}); got != c.want {
			t.Errorf("touches(%v, %v) = %v", c.a, c.b, got)
		}
		if got := touches([]Range{c.b}, []Range{c.a}); got != c.want {
			t.Errorf("touches(%v, %v) = %v", c.b, c.a, got)
		}
	}
}

// TestLinesIntersectWhereGitConflicts: the ranges intersect exactly when
// git merge-tree of the two sides conflicts, for changes of adjacent lines,
// lines one apart, and insertions either side of an unchanged line.
func TestLinesIntersectWhereGitConflicts(t *testing.T) {
	insertAfter := func(n int, text string) func(string) string {
		return func(s string) string {
			ls := strings.SplitAfter(s, "\n")
			return strings.Join(ls[:n], "") + text + "\n" + strings.Join(ls[n:], "")
		}
	}
	set := func(n int, text string) func(string) string {
		return func(s string) string {
			ls := strings.Split(s, "\n")
			ls[n-1] = text
			return strings.Join(ls, "\n")
		}
	}
	for _, c := range []struct {
		name string
		a, b func(string) string
	}{
		{"adjacent lines", set(5, "A"), set(6, "B")},
		{"one line apart", set(5, "A"), set(7, "B")},
		{"insert either side of line 1", insertAfter(0, "A"), insertAfter(1, "B")},
		{"insert right after a changed line", set(5, "A"), insertAfter(5, "B")},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newRig(t, Config{})
			var sides []Side
			for i, fn := range []func(string) string{c.a, c.b} {
				id := task.ID(fmt.Sprintf("t-%05d", i))
				dir := g.task(id, "x")
				p := filepath.Join(dir, "a.go")
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(fn(string(b))), 0o644); err != nil {
					t.Fatal(err)
				}
				sides = append(sides, Side{TaskID: id, Repo: g.repo, Path: dir, Files: []string{"a.go"}})
			}
			f, err := GitForecaster{}.Forecast(context.Background(), sides[0], sides[1])
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Lines) != 1 {
				t.Fatalf("lines = %+v, want a.go", f.Lines)
			}
			if f.Lines[0].Intersect != (f.Result == Conflict) {
				t.Errorf("ranges %v | %v intersect=%v, but git merge-tree says %s", f.Lines[0].A, f.Lines[0].B, f.Lines[0].Intersect, f.Result)
			}
		})
	}
}

// TestWorktreeMadeAfterTheRadarLooked: tasks the radar found running at its
// start before their worktrees were recorded (provisioning under way) are
// tracked once they change files.
func TestWorktreeMadeAfterTheRadarLooked(t *testing.T) {
	g := newRig(t, Config{Enabled: true})
	g.stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now := time.Now().UTC()
	ids := []task.ID{"t-aaaaa", "t-bbbbb"}
	for _, id := range ids {
		if _, err := g.st.CreateTask(ctx, task.Task{ID: id, Description: "x", Status: task.Running, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	r := New(Options{Config: g.cfg, Store: g.st, Inject: g.act.Inject, Forecaster: instant{}})
	r.adoptRunning(ctx)
	for _, id := range ids {
		path := filepath.Join(t.TempDir(), string(id))
		branch := "neuraphage/" + string(id) + "/work"
		gitIn(t, g.repo, "worktree", "add", "-q", "-b", branch, path, "main")
		if _, err := g.st.PutWorktree(ctx, store.Worktree{TaskID: id, Repo: g.repo, Branch: branch, Base: "main", Path: path, State: store.WorktreeActive}); err != nil {
			t.Fatal(err)
		}
		r.Observe(ctx, event.New(time.Now(), id, event.FileChanged{Path: "a.go"}))
	}
	if m := r.Matrix(""); len(m) != 1 || !slices.Equal(m[0].Files, []string{"a.go"}) {
		t.Fatalf("matrix = %+v, want the pair on a.go", m)
	}
}
