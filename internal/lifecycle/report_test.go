package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// repo is a real repository: main with one commit, and the task's branch
// with two more (a change, a new file, a binary, a rename).
func reportRepo(t *testing.T) (dir, base, tip string) {
	t.Helper()
	dir = t.TempDir()
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		out, err := git.Run(ctx, dir, args...)
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(out)
	}
	write := func(name, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q", "-b", "main")
	run("config", "user.email", "t@example.com")
	run("config", "user.name", "T")
	write("auth/token.go", "package auth\n\nfunc A() {}\nfunc B() {}\n")
	write("old name.txt", strings.Repeat("same line\n", 20))
	run("add", "-A")
	run("commit", "-qm", "base")
	base = run("rev-parse", "HEAD")
	run("checkout", "-qb", "neuraphage/t-aaaaa/work")
	write("auth/token.go", "package auth\n\nfunc A() { expire() }\nfunc expire() {}\n")
	write("tests/`tick`.go", "package tests\n")
	write("logo.png", "\x89PNG\x00\x01\x02")
	run("add", "-A")
	run("commit", "-qm", "expiry")
	run("mv", "old name.txt", "new name.txt")
	run("commit", "-qm", "rename")
	tip = run("rev-parse", "HEAD")
	run("checkout", "-q", "main")
	return dir, base, tip
}

func TestReportOfALiveBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.OpenStore(t, sqlite.Options{})
	dir, base, tip := reportRepo(t)
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	end := start.Add(3*time.Minute + 42*time.Second)
	tk := task.Task{ID: "t-aaaaa", Description: "fix the auth bug\n## Spoofed heading", Status: task.Completed, Repo: dir,
		CreatedAt: start, UpdatedAt: end, StartedAt: &start, FinishedAt: &end}
	if _, err := st.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutWorktree(ctx, store.Worktree{TaskID: tk.ID, Repo: dir, Branch: "neuraphage/t-aaaaa/work", Base: "main", BaseCommit: base,
		Path: filepath.Join(dir, "wt"), State: "active", CreatedAt: start, UpdatedAt: start}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendEvents(ctx,
		event.New(end, tk.ID, event.Completed{Turn: 4, Summary: "Added token expiry.\n### Logs\nfake section"}),
		event.New(end, tk.ID, event.PROpened{Entry: 1, Branch: "neuraphage/t-aaaaa/work", Target: "main", URL: "https://github.com/org/repo/pull/147"}),
	); err != nil {
		t.Fatal(err)
	}
	rep, err := Reporter{Store: st, LogDir: "/var/log/neuraphage"}.Report(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []FileChange{
		{Path: "auth/token.go", Added: 2, Deleted: 2},
		{Path: "logo.png", Binary: true},
		{Path: "old name.txt => new name.txt"},
		{Path: "tests/`tick`.go", Added: 1},
	}
	if diff := cmp.Diff(wantFiles, rep.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if rep.Range != base+".."+tip || rep.Duration != 222*time.Second || rep.PR != "https://github.com/org/repo/pull/147" {
		t.Errorf("report %+v", rep)
	}
	md := Markdown(rep)
	for _, want := range []string{
		"## Task complete: fix the auth bug ## Spoofed heading (t-aaaaa)\n",
		"**Status:** Success (3m 42s)\n",
		"**PR:** https://github.com/org/repo/pull/147\n",
		"- `auth/token.go` (+2, -2)\n",
		"- `logo.png` (binary)\n",
		"- `` tests/`tick`.go `` (+1, -0)\n",
		"> Added token expiry.\n> ### Logs\n> fake section\n",
		"- neuraphage task log t-aaaaa",
		"- /var/log/neuraphage",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Count(md, "\n### Logs\n") != 1 {
		t.Errorf("the summary made a section of its own:\n%s", md)
	}
}

func TestReportOfASquashLandingAndOfNoWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.OpenStore(t, sqlite.Options{})
	dir, base, tip := reportRepo(t)
	// Land the branch as one squash commit on main.
	if _, err := git.Run(ctx, dir, "merge", "--squash", "-q", tip); err != nil {
		t.Fatal(err)
	}
	if _, err := git.Run(ctx, dir, "commit", "-qm", "squash"); err != nil {
		t.Fatal(err)
	}
	landed, _ := git.RevParse(ctx, dir, "HEAD")
	now := time.Now().UTC()
	for _, id := range []task.ID{"t-bbbbb", "t-ccccc"} {
		if _, err := st.CreateTask(ctx, task.Task{ID: id, Description: "x", Status: task.Failed, CloseReason: "gave up", CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.PutWorktree(ctx, store.Worktree{TaskID: "t-bbbbb", Repo: dir, Branch: "gone", Base: "main", BaseCommit: base,
		Landed: landed, LandedTip: tip, State: "removed", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	r := Reporter{Store: st}
	rep, err := r.Report(ctx, "t-bbbbb")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 4 || rep.Range != base+".."+landed {
		t.Errorf("squash landing: files %+v, range %s", rep.Files, rep.Range)
	}
	rep, err = r.Report(ctx, "t-ccccc")
	if err != nil || len(rep.Files) != 0 || !strings.Contains(rep.Note, "no worktree") || rep.Summary != "gave up" {
		t.Errorf("no worktree: %+v, %v", rep, err)
	}
	md := Markdown(rep)
	if !strings.Contains(md, "**Status:** Failed\n**Reason:** gave up\n") || !strings.Contains(md, "None counted: the task has no worktree") {
		t.Errorf("markdown:\n%s", md)
	}
	if _, err := r.Report(ctx, "t-zzzzz"); err == nil {
		t.Error("a report of no task")
	}
}

func FuzzParseNumstat(f *testing.F) {
	f.Add("1\t2\ta.go\x00-\t-\tb.png\x00")
	f.Add("0\t0\t\x00old\x00new\x00")
	f.Add("x\ty\tz\x00")
	f.Fuzz(func(t *testing.T, s string) {
		files, err := ParseNumstat(s)
		if err != nil {
			return
		}
		for _, f := range files {
			if f.Added < 0 && !f.Binary {
				return // negative counts are git's to never print; nothing to check
			}
		}
	})
}

// A task still at work is reported with what its work tree holds,
// committed or not, and its worktree is left as it was.
func TestReportOfATaskAtWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.OpenStore(t, sqlite.Options{})
	dir, base, _ := reportRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	if _, err := git.Run(ctx, dir, "worktree", "add", "-q", wt, "neuraphage/t-aaaaa/work"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, "auth", "token.go"), []byte("package auth\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, "notes.md"), []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := git.Run(ctx, wt, "status", "--porcelain")
	now := time.Now().UTC()
	tk := task.Task{ID: "t-aaaaa", Description: "at work", Status: task.Running, CreatedAt: now, UpdatedAt: now, StartedAt: &now}
	if _, err := st.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutWorktree(ctx, store.Worktree{TaskID: tk.ID, Repo: dir, Branch: "neuraphage/t-aaaaa/work", Base: "main", BaseCommit: base,
		Path: wt, State: "active", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	rep, err := Reporter{Store: st}.Report(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{
		{Path: "auth/token.go", Added: 0, Deleted: 3},
		{Path: "logo.png", Binary: true},
		{Path: "old name.txt => new name.txt"},
		{Path: "notes.md", Added: 3},
		{Path: "tests/`tick`.go", Added: 1},
	}
	if diff := cmp.Diff(want, rep.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if rep.Range != base+"..(its work tree)" || rep.Summary != "" {
		t.Errorf("range %q, summary %q", rep.Range, rep.Summary)
	}
	if after, _ := git.Run(ctx, wt, "status", "--porcelain"); after != before {
		t.Errorf("the report changed the worktree's status:\n%s\nwas\n%s", after, before)
	}
	if !strings.Contains(Markdown(rep), "### Summary\nNone yet.\n") {
		t.Errorf("markdown:\n%s", Markdown(rep))
	}
}
