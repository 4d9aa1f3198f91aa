package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The larger and the smaller change of parser.go's first line. The
// larger task, told to rebase after the smaller one landed, keeps both.
var (
	largeParser  = "package parser // large\n" + largeLines
	mergedParser = "package parser // small // large\n" + largeLines
	largeLines   = strings.Repeat("// large line\n", 10)
)

// overlapMergeScript: a blocker task writes a file of its own; a large and
// a small task change parser.go's first line (the large one adds ten
// lines). When the large task runs again with the rebase notice, it
// brings main in with a merge (in the sandbox, git cannot finish a rebase
// that stopped on a conflict: it deletes refs under the lock of the
// repository's packed-refs, which the sandbox keeps read-only), keeps both
// changes and completes.
var overlapMergeScript = fmt.Sprintf(`
conversations:
  - name: large-rebase
    match: {user: "large task", after: "smaller change first"}
    steps:
      - tool_calls: [{name: bash, input: {command: %q}}]
      - tool_calls: [{name: complete_task, input: {summary: "rebased onto main"}}]
  - name: large
    match: {user: "large task"}
    steps:
      - tool_calls: [{name: write_file, input: {path: parser.go, content: %q}}]
      - tool_calls: [{name: complete_task, input: {summary: "large change"}}]
  - name: small
    match: {user: "small task"}
    steps:
      - tool_calls: [{name: edit_file, input: {path: parser.go, old: "package parser\n", new: "package parser // small\n"}}]
      - tool_calls: [{name: complete_task, input: {summary: "small change"}}]
  - name: blocker
    match: {user: "blocker task"}
    steps:
      - tool_calls: [{name: write_file, input: {path: blocker.txt, content: "blocker\n"}}]
      - tool_calls: [{name: complete_task, input: {summary: "blocker"}}]
`, "g='git -c user.name=T -c user.email=t@example.com'; $g merge -q --no-edit main >/dev/null 2>&1 || { printf '"+strings.ReplaceAll(mergedParser, "\n", `\n`)+"' > parser.go && git add parser.go && $g commit -q --no-edit; }; git log --oneline -1",
	largeParser)

// Two tasks change the same line of parser.go and are ready in the merge
// queue together, the larger queued first: the smaller lands first, the
// larger's entry yields (not a send-back), its task hears the main
// watcher's rebase notice naming the smaller task in its next model
// request, brings main in and lands second.
//
// Both entries are ready together because the queue's one worker for main
// is held, by the gate, on a third task's entry while they are enqueued:
// the gate reads a line from a FIFO the test writes to once both are in.
func TestOverlapMergeSmallerLandsFirst(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(shortTemp(t), "hold")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Open read-write: it never blocks, and it keeps a writer on the FIFO
	// so that the gate's open does not block either, only its read.
	hold, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hold.Close() })
	// Once the FIFO is gone every gate passes: one that tests for it just
	// before it goes fails to open it, and passes too.
	gate := fmt.Sprintf("{ [ -p %q ] && read x < %q; } 2>/dev/null; true", fifo, fifo)
	d := startModel(t, overlapMergeScript, "", func(c *config.Config) {
		c.Supervision.Watcher.Enabled = false
		c.Supervision.Syncer.Enabled = false
		c.Supervision.Sessions.Enabled = false
		c.Merge.Gate = gate
	})
	had := func(id task.ID, kind event.Kind) {
		t.Helper()
		d.wait(t, id, "had "+string(kind), func(task.Task) bool { return len(d.events(t, id, kind)) > 0 })
	}
	// The worker takes the blocker's entry alone and waits in its gate.
	blocker := d.create(t, api.CreateTaskRequest{Description: "the blocker task", Persona: "junior"})
	had(blocker.ID, event.KindMergeStarted)
	large := d.create(t, api.CreateTaskRequest{Description: "the large task", Persona: "junior"})
	had(large.ID, event.KindMergeQueued)
	small := d.create(t, api.CreateTaskRequest{Description: "the small task", Persona: "junior"})
	had(small.ID, event.KindMergeQueued)
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if _, err := hold.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}

	for _, id := range []task.ID{blocker.ID, small.ID, large.ID} {
		if done := d.finish(t, id); done.Status != task.Completed {
			d.dump(t)
			t.Fatalf("%s: %s (%s)", id, done.Status, done.CloseReason)
		}
	}

	// main: the blocker, then the smaller change, then the larger, which
	// merged main with both changes kept.
	landed := func(id task.ID) string {
		t.Helper()
		ls := d.events(t, id, event.KindMergeLanded)
		if len(ls) != 1 {
			t.Fatalf("merge.landed on %s: %d, want 1", id, len(ls))
		}
		return ls[0].Payload.(event.MergeLanded).Commit
	}
	chain := []string{landed(blocker.ID), landed(small.ID), landed(large.ID)}
	ctx := context.Background()
	for i := 1; i < len(chain); i++ {
		if ok, err := git.IsAncestor(ctx, d.repo, chain[i-1], chain[i]); err != nil || !ok || chain[i-1] == chain[i] {
			t.Errorf("main's history: landing %d (%s) is not before landing %d (%s): %v", i-1, chain[i-1], i, chain[i], err)
		}
	}
	if tip, err := git.RevParse(ctx, d.repo, "refs/heads/main"); err != nil || tip != chain[2] {
		t.Errorf("main is at %s (%v), want the large task's landing %s", tip, err, chain[2])
	}
	if b, err := os.ReadFile(filepath.Join(d.repo, "parser.go")); err != nil || string(b) != mergedParser {
		t.Errorf("main's parser.go = %q, %v; want both changes", b, err)
	}

	// The queue's decision and the yield, on the larger task only.
	ord := d.events(t, large.ID, event.KindMergeOrdered)
	if len(ord) != 1 {
		t.Fatalf("merge.ordered on the large task: %d, want 1", len(ord))
	}
	if o := ord[0].Payload.(event.MergeOrdered); o.After != string(small.ID) || !slices.Equal(o.Files, []string{"parser.go"}) || o.Lines <= o.AfterLines {
		t.Errorf("merge.ordered = %+v, want after %s on parser.go, larger than it", o, small.ID)
	}
	yl := d.events(t, large.ID, event.KindMergeYielded)
	if len(yl) != 1 {
		t.Fatalf("merge.yielded on the large task: %d, want 1", len(yl))
	}
	if y := yl[0].Payload.(event.MergeYielded); y.After != string(small.ID) || y.Notice != "main_watcher" || !slices.Equal(y.Conflicts, []string{"parser.go"}) {
		t.Errorf("merge.yielded = %+v, want after %s, told by the main watcher, conflicting in parser.go", y, small.ID)
	}
	for _, id := range []task.ID{blocker.ID, small.ID} {
		if n := len(d.events(t, id, event.KindMergeOrdered)) + len(d.events(t, id, event.KindMergeYielded)); n != 0 {
			t.Errorf("%s has %d ordering events, want none", id, n)
		}
	}
	for _, id := range []task.ID{blocker.ID, small.ID, large.ID} {
		if n := len(d.events(t, id, event.KindMergeConflicted)); n != 0 {
			t.Errorf("%s was sent back %d times, want never", id, n)
		}
	}
	if n := len(d.events(t, large.ID, event.KindRebaseRequired)); n != 1 {
		t.Errorf("rebase.required on the large task: %d, want 1", n)
	}
	if n := len(d.events(t, large.ID, event.KindMergeLanded)); n != 1 {
		t.Errorf("merge.landed on the large task: %d, want 1", n)
	}

	// The notice reached the model in the large task's next request.
	rs := d.requests("large-rebase")
	if len(rs) == 0 {
		d.dump(t)
		t.Fatal("the large task's model never saw the rebase notice")
	}
	var notice string
	for _, m := range rs[0].Messages {
		if strings.Contains(m.Text(), "<rebase-notice") {
			notice = m.Text()
		}
	}
	for _, want := range []string{`from="main-watcher"`, `reason="merge_order"`, "landed task " + string(small.ID) + "'s smaller change first", "git merge main"} {
		if !strings.Contains(notice, want) {
			t.Errorf("the rebase notice lacks %q:\n%s", want, notice)
		}
	}
}
