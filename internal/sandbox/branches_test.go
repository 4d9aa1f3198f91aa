package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/proc"
)

// otherBranchCases are the ways task t1 could move, delete or forge the
// branches of tasks t2 (checked out in its worktree) and t3 (a branch
// alone), or make a branch beside them. Unconfined each succeeds
// (TestOtherBranchCasesUnconfined); in the sandbox each must fail
// (TestEscapes).
var otherBranchCases = []struct{ name, cmd string }{
	{"git update-ref another task's branch", `git update-ref refs/heads/$B HEAD`},
	{"git update-ref -d another task's branch", `git update-ref -d refs/heads/$B`},
	{"git branch -f another task's branch", `git branch -f $C HEAD`},
	{"git branch -D another task's branch", `git branch -D $C`},
	{"git branch -M own branch over another's", `git branch -M $C`},
	{"git branch beside the tasks' branches", `git branch neuraphage/t9/work`},
	{"overwrite another task's ref file", `git rev-parse HEAD > "$REPO/.git/refs/heads/$B"`},
	{"rm another task's ref file", `rm -f "$REPO/.git/refs/heads/$B"`},
	{"rm another task's ref directory", `rm -rf "$REPO/.git/refs/heads/neuraphage/t2"`},
	{"move own ref directory over another's", `rm -rf "$REPO/.git/refs/heads/neuraphage/t3" && mv "$REPO/.git/refs/heads/neuraphage/t1" "$REPO/.git/refs/heads/neuraphage/t3"`},
	{"write another task's reflog", `echo forged >> "$REPO/.git/logs/refs/heads/$B"`},
	{"rm another task's reflog", `rm -f "$REPO/.git/logs/refs/heads/$C"`},
	{"symlink to another task's ref, then write", `ln -s "$REPO/.git/refs/heads/$B" b && git rev-parse HEAD > b`},
}

// others records the branches and the ref and reflog files of the tasks
// other than t1.
func (w *world) others(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{"branches": w.git(t, w.repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")}
	for _, b := range []string{branchB, branchC} {
		for _, p := range []string{filepath.Join(w.repo, ".git", "refs", "heads", b), filepath.Join(w.repo, ".git", "logs", "refs", "heads", b)} {
			c, err := os.ReadFile(p)
			out[p] = fmt.Sprint(string(c), err)
		}
	}
	return out
}

// TestOtherBranchCasesUnconfined: without the sandbox each case of
// otherBranchCases does move or forge another task's branch, so its
// failure in TestEscapes is the sandbox's doing.
func TestOtherBranchCasesUnconfined(t *testing.T) {
	for _, tc := range otherBranchCases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			before := w.others(t)
			res, err := proc.Run(context.Background(), proc.Cmd{Dir: w.wt, Shell: tc.cmd, Env: w.env})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("%s: %v, exit %d: %s", tc.cmd, err, res.ExitCode, res.Output)
			}
			if d := diff(before, w.others(t)); len(d) == 0 {
				t.Errorf("%s: the other tasks' branches did not change", tc.cmd)
			}
		})
	}
}
