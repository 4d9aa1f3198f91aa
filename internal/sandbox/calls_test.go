package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// TestUserGCDuringCall: while a command of the task runs, its commit sits
// in the task's directory alone; the user's git gc --prune=now then loses
// nothing (the directory is listed), nor after the call, when the commit
// is in the shared store.
func TestUserGCDuringCall(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	fifo := filepath.Join(w.tmp, "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := l.Wrap(proc.Cmd{Dir: w.wt, Env: w.env,
		Shell: `echo d > d.txt && git add d.txt && git commit -q -m during && git rev-parse HEAD > "$TMPDIR/tip.tmp" && mv "$TMPDIR/tip.tmp" "$TMPDIR/tip" && read x < "$TMPDIR/go"`,
	}, sandbox.Task{Dir: w.wt, TempDir: w.tmp, Repo: w.repo, Branch: branchA})
	if err != nil {
		t.Fatal(err)
	}
	type ran struct {
		res proc.Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := proc.Run(context.Background(), c)
		done <- ran{res, err}
	}()
	// Held open read-write (which never blocks), so the line waits in
	// the pipe for the command to read, whenever it gets there.
	gate, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			gate.WriteString("go\n")
		}
	}
	defer func() { release(); <-done; gate.Close() }()
	var tip string
	testkit.WaitFor(t, "the task's commit", func() bool {
		b, err := os.ReadFile(filepath.Join(w.tmp, "tip"))
		tip = strings.TrimSpace(string(b))
		return err == nil && tip != ""
	})
	if !exists(objectPath(w.own(), tip)) || exists(objectPath(filepath.Join(w.common(), "objects"), tip)) {
		t.Fatalf("during the call, the commit %s is not in the task's directory alone", tip)
	}
	w.git(t, w.repo, "gc", "-q", "--prune=now")
	if got := w.git(t, w.repo, "log", "--all", "--format=%s"); !strings.Contains(got, "during") {
		t.Errorf("git log --all during the call: %q, want the task's commit", got)
	}
	w.clean(t, "after the user's gc during the call")

	release()
	r := <-done
	done <- r // for the deferred wait
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("the command: %v %s", r.err, r.res.Output)
	}
	if !exists(objectPath(filepath.Join(w.common(), "objects"), tip)) || w.ownObjects(t) != 0 {
		t.Errorf("after the call, the commit is not in the shared store alone")
	}
	w.git(t, w.repo, "gc", "-q", "--prune=now")
	if got := w.git(t, w.repo, "log", "-1", "--format=%s", branchA); got != "during" {
		t.Errorf("the task's branch after the user's gc: %q", got)
	}
	w.clean(t, "after the user's gc after the call")
}

// TestKilledMidCommand: a command whose end the daemon never saw (killed
// with it) leaves its commit in the task's directory, still listed; the
// user's gc loses nothing; DetachObjects (what the daemon's next start
// runs) moves it into the shared store and removes the line; the task's
// next command works as before.
func TestKilledMidCommand(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	res := w.killedAtEnd(t, l, `git commit -q --allow-empty -m orphan && git rev-parse HEAD`)
	if res.ExitCode != 0 {
		t.Fatalf("%s", res.Output)
	}
	tip := strings.TrimSpace(res.Output)
	w.git(t, w.repo, "gc", "-q", "--prune=now")
	w.clean(t, "after the user's gc, the command's end unseen")
	if _, err := sandbox.DetachObjects(w.common(), "t1"); err != nil {
		t.Fatal(err)
	}
	if !exists(objectPath(filepath.Join(w.common(), "objects"), tip)) || w.ownObjects(t) != 0 {
		t.Errorf("the orphan commit is not in the shared store alone")
	}
	if b, _ := os.ReadFile(filepath.Join(w.common(), "objects", "info", "alternates")); strings.Contains(string(b), "t1") {
		t.Errorf("the alternates still name the task: %q", b)
	}
	w.clean(t, "after DetachObjects")
	if res := w.sh(t, l, `git commit -q --allow-empty -m next`); res.ExitCode != 0 {
		t.Fatalf("the next command: %s", res.Output)
	}
	if got := w.git(t, w.repo, "log", "--format=%s", "-2", branchA); got != "next\norphan" {
		t.Errorf("the task's history reads %q", got)
	}
}

// TestBackgroundWriterCaughtNextCall: a process a command left behind
// (out of its group, so not killed at its end) that commits after the call
// ended writes in the task's directory; the task's next command's end moves
// it into the shared store.
func TestBackgroundWriterCaughtNextCall(t *testing.T) {
	w := newWorld(t)
	l := w.launcher(t)
	fifo := filepath.Join(w.tmp, "bg")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The call returns once the job has left its group (it writes
	// bg-started after setsid), so killing the group does not reach it.
	res := w.sh(t, l, `setsid sh -c 'touch "$TMPDIR/bg-started"; read x < "$TMPDIR/bg"; git commit -q --allow-empty -m late && git rev-parse HEAD > "$TMPDIR/late.tmp" && mv "$TMPDIR/late.tmp" "$TMPDIR/late"' >/dev/null 2>&1 </dev/null &
while [ ! -e "$TMPDIR/bg-started" ]; do sleep 0.01; done`)
	if res.ExitCode != 0 {
		t.Fatal(res.Output)
	}
	// The job's reading end opens when it gets there.
	testkit.WaitFor(t, "the background job to read", func() bool {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return false
		}
		f.WriteString("go\n")
		f.Close()
		return true
	})
	var tip string
	testkit.WaitFor(t, "the background commit", func() bool {
		b, err := os.ReadFile(filepath.Join(w.tmp, "late"))
		tip = strings.TrimSpace(string(b))
		return err == nil && tip != ""
	})
	if !exists(objectPath(w.own(), tip)) {
		t.Fatal("the late commit is not in the task's directory")
	}
	if res := w.sh(t, l, `true`); res.ExitCode != 0 {
		t.Fatal(res.Output)
	}
	if !exists(objectPath(filepath.Join(w.common(), "objects"), tip)) || w.ownObjects(t) != 0 {
		t.Errorf("the late commit was not moved at the next command's end")
	}
	if got := w.git(t, w.repo, "log", "-1", "--format=%s", branchA); got != "late" {
		t.Errorf("the task's branch reads %q", got)
	}
	w.clean(t, "after the next command")
}
