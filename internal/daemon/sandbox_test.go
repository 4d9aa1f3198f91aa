package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/worktree"
)

const sandboxScript = `
conversations:
  - name: escape
    match: {user: "try the sandbox"}
    steps:
      - tool_calls: [{name: bash, input: {command: "echo $TMPDIR > tmpdir.txt && touch $TMPDIR/scratch && (touch ../outside.txt; echo rc=$?) > rc.txt 2>&1"}}]
      - tool_calls: [{name: bash, input: {command: "echo c > c.txt && git add c.txt && git -c user.name=T -c user.email=t@example.com commit -q -m 'committed by the task'"}}]
      - tool_calls: [{name: complete_task, input: {summary: "tried"}}]
`

// A task's commands run confined, with a private TMPDIR under the data
// directory that is removed once the task ends; status names the mode.
func TestTaskSandbox(t *testing.T) {
	t.Parallel()
	if st := sandbox.Probe(); !st.Available() {
		t.Skipf("this kernel cannot confine commands (%s)", st)
	}
	d := startModel(t, sandboxScript, "", func(c *config.Config) { c.Merge.Auto = false })
	st, err := d.client.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Sandbox.Mode != "landlock" || st.Sandbox.ABI == 0 || !strings.HasPrefix(st.Sandbox.Summary, "landlock v") {
		t.Errorf("status sandbox = %+v, want landlock", st.Sandbox)
	}
	tk := d.create(t, api.CreateTaskRequest{Description: "try the sandbox"})
	done := d.wait(t, tk.ID, "finished", func(t task.Task) bool { return t.Status.Terminal() })
	if done.Status != task.Completed {
		t.Fatalf("task %s (%s)", done.Status, done.CloseReason)
	}
	wt := filepath.Join(filepath.Dir(d.repo), ".neuraphage-worktrees", string(tk.ID))
	tmp, err := os.ReadFile(filepath.Join(wt, "tmpdir.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(d.paths.DataDir, "tmp", string(tk.ID))
	if strings.TrimSpace(string(tmp)) != want {
		t.Errorf("TMPDIR = %q, want %q", tmp, want)
	}
	if rc, _ := os.ReadFile(filepath.Join(wt, "rc.txt")); !strings.Contains(string(rc), "Permission denied") || strings.Contains(string(rc), "rc=0") {
		t.Errorf("writing outside the worktree: %q, want it refused", rc)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(wt), "outside.txt")); err == nil {
		t.Error("the command wrote outside its worktree")
	}
	testkit.WaitFor(t, "the task's TMPDIR to be removed", func() bool {
		_, err := os.Stat(want)
		return os.IsNotExist(err)
	})
	if out, err := git.Run(context.Background(), d.repo, "log", "--format=%s", worktree.Branch(tk.ID)); err != nil || !strings.Contains(out, "committed by the task") {
		t.Errorf("the task's own commit is not on its branch: %q, %v", out, err)
	}
	if n := len(d.events(t, tk.ID, event.KindTaskSandbox)); n != 0 {
		t.Errorf("%d sandbox events, want none: the sandbox enforced everything", n)
	}
}

// With the sandbox off, the task is told once that its commands are not
// confined; with require, its commands are refused.
func TestTaskSandboxOff(t *testing.T) {
	t.Parallel()
	d := startModel(t, sandboxScript, "", func(c *config.Config) {
		c.Merge.Auto = false
		c.Sandbox.Enabled = false
	})
	st, err := d.client.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Sandbox.Mode != "off" || !strings.Contains(st.Sandbox.Summary, "deny-list only") {
		t.Errorf("status sandbox = %+v, want off", st.Sandbox)
	}
	tk := d.create(t, api.CreateTaskRequest{Description: "try the sandbox"})
	d.wait(t, tk.ID, "finished", func(t task.Task) bool { return t.Status.Terminal() })
	evs := d.events(t, tk.ID, event.KindTaskSandbox)
	if len(evs) != 1 {
		t.Fatalf("%d sandbox events, want 1", len(evs))
	}
	if p := evs[0].Payload.(event.TaskSandbox); !strings.Contains(p.Note, "not confined") {
		t.Errorf("sandbox event %+v", p)
	}

	req := startModel(t, sandboxScript, "", func(c *config.Config) {
		c.Merge.Auto = false
		c.Sandbox.Enabled, c.Sandbox.Require = false, true
	})
	tk = req.create(t, api.CreateTaskRequest{Description: "try the sandbox"})
	req.wait(t, tk.ID, "finished", func(t task.Task) bool { return t.Status.Terminal() })
	var refused bool
	for _, e := range req.events(t, tk.ID, event.KindToolResult) {
		if r, ok := e.Payload.(event.ToolResult); ok && strings.Contains(r.Preview, "sandbox.require is set") {
			refused = true
		}
	}
	if !refused {
		t.Error("with require and the sandbox off, the command was not refused")
	}
	wt := filepath.Join(filepath.Dir(req.repo), ".neuraphage-worktrees", string(tk.ID))
	if _, err := os.Stat(filepath.Join(wt, "tmpdir.txt")); err == nil {
		t.Error("the refused command ran")
	}
}

// The bootstrap setup runs confined as the task's commands do (its own
// TMPDIR, nothing written outside the worktree), and the task's commits are
// written in its own object directory and moved into the shared store when
// the command ends, found by every git of the repository.
func TestTaskSetupAndObjectsSandboxed(t *testing.T) {
	t.Parallel()
	if st := sandbox.Probe(); !st.Available() {
		t.Skipf("this kernel cannot confine commands (%s)", st)
	}
	d := startModel(t, sandboxScript, "", func(c *config.Config) {
		c.Merge.Auto = false
		c.Worktree.Bootstrap = []config.Bootstrap{{
			Setup: `echo "$TMPDIR" > setup-tmp.txt && (touch ../setup-outside.txt; echo rc=$?) > setup-rc.txt 2>&1`,
		}}
	})
	tk := d.create(t, api.CreateTaskRequest{Description: "try the sandbox"})
	done := d.wait(t, tk.ID, "finished", func(t task.Task) bool { return t.Status.Terminal() })
	if done.Status != task.Completed {
		t.Fatalf("task %s (%s)", done.Status, done.CloseReason)
	}
	wt := filepath.Join(filepath.Dir(d.repo), ".neuraphage-worktrees", string(tk.ID))
	if tmp, _ := os.ReadFile(filepath.Join(wt, "setup-tmp.txt")); strings.TrimSpace(string(tmp)) != filepath.Join(d.paths.DataDir, "tmp", string(tk.ID)) {
		t.Errorf("the setup's TMPDIR = %q, want the task's", tmp)
	}
	if rc, _ := os.ReadFile(filepath.Join(wt, "setup-rc.txt")); !strings.Contains(string(rc), "Permission denied") {
		t.Errorf("the setup writing outside the worktree: %q, want it refused", rc)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(wt), "setup-outside.txt")); err == nil {
		t.Error("the setup wrote outside its worktree")
	}
	ctx := context.Background()
	r, err := git.Inspect(ctx, d.repo)
	if err != nil {
		t.Fatal(err)
	}
	tip, err := git.RevParse(ctx, d.repo, "refs/heads/"+worktree.Branch(tk.ID))
	if err != nil {
		t.Fatal(err)
	}
	// The task's own commit is the branch's tip or its parent (the daemon
	// commits what the task left after it).
	var own string
	for _, c := range []string{tip, tip + "^"} {
		id, err := git.RevParse(ctx, d.repo, c)
		if err != nil {
			t.Fatal(err)
		}
		if msg, _ := git.Run(ctx, d.repo, "log", "--format=%s", "-1", id); strings.Contains(msg, "committed by the task") {
			own = id
		}
	}
	if own == "" {
		t.Fatalf("no commit of the task's near its branch's tip %s", tip)
	}
	// Written in the task's own object directory, moved into the shared
	// store when its command ended: the directory is empty and unlisted.
	ownDir := sandbox.ObjectDir(r.CommonDir, string(tk.ID))
	if fi, err := os.Stat(ownDir); err != nil || !fi.IsDir() {
		t.Errorf("the task has no object directory: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(ownDir, "??", "*")); len(left) > 0 {
		t.Errorf("objects left in the task's directory between commands: %q", left)
	}
	if _, err := os.Stat(filepath.Join(r.CommonDir, "objects", own[:2], own[2:])); err != nil {
		t.Errorf("the task's commit is not in the shared store: %v", err)
	}
	if alt, _ := os.ReadFile(filepath.Join(r.CommonDir, "objects", "info", "alternates")); strings.Contains(string(alt), string(tk.ID)) {
		t.Errorf("the shared alternates name the finished task: %q", alt)
	}
	if out, err := git.Run(ctx, d.repo, "fsck", "--full", "--no-dangling"); err != nil {
		t.Errorf("git fsck in the user's checkout: %v\n%s", err, out)
	}
}
