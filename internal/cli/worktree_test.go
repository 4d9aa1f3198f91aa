package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

func sampleWorktrees() []api.Worktree {
	return []api.Worktree{
		{
			TaskID: "t-4k2x9", Repo: "/src/app", Branch: "neuraphage/t-4k2x9", Base: "main", BaseCommit: "0123456789abcdef",
			Path: "/src/.neuraphage-worktrees/t-4k2x9", State: api.WorktreeActive, Port: 41000, CreatedAt: t0, UpdatedAt: at(60),
			Exists: true, Changed: []string{"auth/token.go", "auth/token_test.go"}, Untracked: []string{"notes.txt"},
			Tip: "fedcba9876543210", Ahead: 3, Behind: 1,
		},
		{
			TaskID: "t-7abcd", Repo: "/src/app", Branch: "neuraphage/t-7abcd", Base: "main", BaseCommit: "0123456789abcdef",
			Path: "/src/.neuraphage-worktrees/t-7abcd", State: api.WorktreeRemoved, Archive: "refs/neuraphage/archive/t-7abcd",
			Landed: "aaaabbbbccccdddd", LandedTip: "1111222233334444", CreatedAt: t0, UpdatedAt: t0, Archived: true,
		},
		{
			TaskID: "t-9wxyz", Repo: "/src/app", Branch: "neuraphage/t-9wxyz", Base: "main",
			Path: "/src/.neuraphage-worktrees/t-9wxyz", State: api.WorktreeActive, Note: "its directory was missing",
			Tip: "5555666677778888", Merged: true,
		},
		{Repo: "/src/app", Path: "/tmp/old-wt", Branch: "neuraphage/t-old00", State: api.WorktreeActive, Exists: true, Stray: true},
	}
}

func TestWriteWorktrees(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeWorktrees(&b, sampleWorktrees())
	want := `TASK     STATE    BRANCH              AHEAD/BEHIND  MERGED  DIRTY                    PATH
t-4k2x9  active   neuraphage/t-4k2x9  +3/-1         no      2 changed / 1 untracked  /src/.neuraphage-worktrees/t-4k2x9
t-7abcd  removed  neuraphage/t-7abcd  -             landed  -                        /src/.neuraphage-worktrees/t-7abcd
t-9wxyz  missing  neuraphage/t-9wxyz  +0/-0         yes     -                        /src/.neuraphage-worktrees/t-9wxyz
-        stray    neuraphage/t-old00  -             -       clean                    /tmp/old-wt
note t-9wxyz: its directory was missing
1 stray worktree: on a neuraphage branch but unknown to the registry; left alone (` + "`git worktree remove`" + ` it if it is yours)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}

	b.Reset()
	writeWorktrees(&b, nil)
	if !strings.HasPrefix(b.String(), "no worktrees") {
		t.Errorf("empty list: %q", b.String())
	}
}

func TestWriteWorktreeInfo(t *testing.T) {
	t.Parallel()
	ws := sampleWorktrees()
	var b bytes.Buffer
	writeWorktreeInfo(&b, ws[0], time.UTC)
	want := `task:        t-4k2x9
state:       active
repo:        /src/app
path:        /src/.neuraphage-worktrees/t-4k2x9
branch:      neuraphage/t-4k2x9 at fedcba9876
base:        main (started from 0123456789)
commits:     3 ahead of main, 1 behind
merged:      no
port:        41000
work tree:   2 changed / 1 untracked
changed:     2 files
               auth/token.go
               auth/token_test.go
untracked:   1 file
               notes.txt
created:     2026-11-21T09:00:00Z
updated:     2026-11-21T09:01:00Z
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("active (-want +got):\n%s", diff)
	}

	b.Reset()
	writeWorktreeInfo(&b, ws[1], time.UTC)
	want = `task:        t-7abcd
state:       removed; ` + "`worktree restore`" + ` brings it back
repo:        /src/app
path:        /src/.neuraphage-worktrees/t-7abcd
branch:      neuraphage/t-7abcd (gone)
base:        main (started from 0123456789)
commits:     branch gone
merged:      landed
archive:     refs/neuraphage/archive/t-7abcd (holds the branch tip)
landed:      as aaaabbbbcc (from branch tip 1111222233)
created:     2026-11-21T09:00:00Z
updated:     2026-11-21T09:00:00Z
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
}

func TestWriteWorktreeInfoIgnored(t *testing.T) {
	t.Parallel()
	w := sampleWorktrees()[0]
	w.Changed, w.Untracked, w.Ignored = nil, nil, []string{"dev.env", "logs/run.log"}
	var b bytes.Buffer
	writeWorktreeInfo(&b, w, time.UTC)
	for _, want := range []string{
		"work tree:   2 ignored to keep\n",
		"ignored:     2 files\n               dev.env\n               logs/run.log\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("info lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "clean") {
		t.Errorf("info says clean with ignored files to keep:\n%s", b.String())
	}
}

func TestWritePrune(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writePrune(&b, []api.PruneResult{
		{TaskID: "t-4k2x9", Path: "/wt/t-4k2x9", Removed: true, Reason: "removed; branch tip kept under refs/neuraphage/archive/t-4k2x9"},
		{TaskID: "t-7abcd", Path: "/wt/t-7abcd", Reason: "/wt/t-7abcd holds 1 untracked file(s) (x.txt); commit or remove them, then prune again"},
	})
	want := `removed  t-4k2x9  /wt/t-4k2x9  removed; branch tip kept under refs/neuraphage/archive/t-4k2x9
kept     t-7abcd  /wt/t-7abcd  /wt/t-7abcd holds 1 untracked file(s) (x.txt); commit or remove them, then prune again
1 removed, 1 kept (a kept worktree holds work a removal would lose: commit or remove it, then prune again)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("prune (-want +got):\n%s", diff)
	}
	b.Reset()
	writePrune(&b, nil)
	if b.String() != "nothing to prune: no finished task has a worktree\n" {
		t.Errorf("empty prune: %q", b.String())
	}
}

func TestWorktreeCommands(t *testing.T) {
	t.Parallel()
	paths := make(chan string, 8)
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/worktrees": func(w http.ResponseWriter, r *http.Request) {
			paths <- r.Method + " " + r.URL.Path
			writeAPI(w, api.WorktreeList{Worktrees: sampleWorktrees()})
		},
		"GET /v1/worktrees/{ref}": func(w http.ResponseWriter, r *http.Request) {
			paths <- r.Method + " " + r.URL.Path
			if r.PathValue("ref") != "4k2" {
				w.WriteHeader(http.StatusNotFound)
				writeAPI(w, api.Error{Code: api.CodeNotFound, Message: "task \"zzz\": not found", Hint: "`neuraphage worktree list` lists the worktrees"})
				return
			}
			writeAPI(w, sampleWorktrees()[0])
		},
		"POST /v1/worktrees/prune": func(w http.ResponseWriter, r *http.Request) {
			paths <- r.Method + " " + r.URL.Path
			writeAPI(w, api.PruneReport{Results: []api.PruneResult{{TaskID: "t-7abcd", Path: "/wt/t-7abcd", Reason: "holds 1 untracked file(s)"}}})
		},
		"POST /v1/worktrees/{ref}/restore": func(w http.ResponseWriter, r *http.Request) {
			paths <- r.Method + " " + r.URL.Path
			writeAPI(w, sampleWorktrees()[0])
		},
	})

	code, out, errOut := runCLI(t, home, "", "worktree", "list", "--json")
	if code != ExitOK {
		t.Fatalf("list --json: exit %d, stderr %q", code, errOut)
	}
	var ws []api.Worktree
	if err := json.Unmarshal([]byte(out), &ws); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if diff := cmp.Diff(sampleWorktrees(), ws); diff != "" {
		t.Errorf("list --json (-want +got):\n%s", diff)
	}
	if p := <-paths; p != "GET /v1/worktrees" {
		t.Errorf("list asked %s", p)
	}

	code, out, errOut = runCLI(t, home, "", "worktree", "info", "4k2")
	if code != ExitOK || !strings.Contains(out, "               auth/token_test.go\n") || !strings.Contains(out, "port:        41000\n") {
		t.Errorf("info: exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
	if p := <-paths; p != "GET /v1/worktrees/4k2" {
		t.Errorf("info asked %s", p)
	}

	code, out, errOut = runCLI(t, home, "", "worktree", "info", "zzz")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "not found") || !strings.Contains(errOut, "hint: `neuraphage worktree list`") {
		t.Errorf("info of an unknown task: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	<-paths

	code, out, errOut = runCLI(t, home, "", "worktree", "prune")
	if code != ExitOK || !strings.Contains(out, "kept  t-7abcd  /wt/t-7abcd  holds 1 untracked file(s)\n") || !strings.Contains(out, "0 removed, 1 kept") {
		t.Errorf("prune: exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
	<-paths

	code, out, errOut = runCLI(t, home, "", "worktree", "restore", "t-4k2x9")
	if code != ExitOK || out != "t-4k2x9's worktree is at /src/.neuraphage-worktrees/t-4k2x9 on branch neuraphage/t-4k2x9 (3 ahead of main, 1 behind)\n" {
		t.Errorf("restore: exit %d, stderr %q, output %q", code, errOut, out)
	}
	if p := <-paths; p != "POST /v1/worktrees/t-4k2x9/restore" {
		t.Errorf("restore asked %s", p)
	}
}

// TestWorktreeAndMergeUsageErrors: bad arguments are refused before any
// daemon is needed, with exit code 2 and a hint.
func TestWorktreeAndMergeUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"worktree", "info"},
		{"worktree", "info", "a", "b"},
		{"worktree", "restore"},
		{"worktree", "list", "extra"},
		{"worktree", "prune", "t-4k2x9"},
		{"worktree", "frob"},
		{"merge", "status", "--recent", "-1"},
		{"merge", "status", "--recent", "lots"},
		{"merge", "enqueue"},
		{"merge", "retry", "a", "b"},
		{"merge", "cancel"},
		{"merge", "enqueue", "t-4k2x9", "--reason", "x"},
	} {
		code, out, errOut := runCLI(t, t.TempDir(), "", args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, "\nhint: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with a hint", args, code, out, errOut)
		}
	}
}

func TestWriteArchivePrune(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeArchivePrune(&b, []api.ArchivePruneResult{
		{TaskID: "t-4k2x9", Dir: "/r/.git/neuraphage/ignored/t-4k2x9", Files: 2, Removed: true, Reason: "archived 720h0m0s ago, more than 168h0m0s"},
		{TaskID: "t-7abcd", Dir: "/r/.git/neuraphage/ignored/t-7abcd", Files: 1, Reason: "archived 1h0m0s ago, within 168h0m0s; kept"},
	})
	want := `deleted  t-4k2x9  2 file(s)  /r/.git/neuraphage/ignored/t-4k2x9  archived 720h0m0s ago, more than 168h0m0s
kept     t-7abcd  1 file(s)  /r/.git/neuraphage/ignored/t-7abcd  archived 1h0m0s ago, within 168h0m0s; kept
1 deleted, 1 kept
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("archive prune (-want +got):\n%s", diff)
	}
}

func TestParseAge(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "72h": 72 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := parseAge(in); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0d", "-1h", "soon", "3x"} {
		if _, err := parseAge(in); err == nil {
			t.Errorf("parseAge(%q) accepted", in)
		}
	}
}
