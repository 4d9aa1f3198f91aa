package lifecycle

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestNarrowSandbox(t *testing.T) {
	t.Parallel()
	base := sandbox.Policy{
		Write:    []string{"/w/t1", "/tmp/t1", "/repo/.git/worktrees/t1", "/home/u/.cache/go-build", "/home/u/.npm"},
		Objects:  []string{"/repo/.git/objects"},
		DenyRead: []string{"/home/u/.ssh"},
		Network:  sandbox.Network{Ports: []uint16{443}},
	}
	userWrite := []string{"/home/u/.cache/go-build", "/home/u/.npm"}
	for _, tc := range []struct {
		name string
		m    task.Manifest
		want []string
	}{
		{"the whole worktree and no extra path", task.Manifest{Writable: []string{"."}},
			[]string{"/w/t1", "/tmp/t1", "/repo/.git/worktrees/t1"}},
		{"part of the worktree and part of a cache", task.Manifest{Writable: []string{"src", "docs", "/home/u/.cache/go-build/x"}},
			[]string{"/w/t1/src", "/w/t1/docs", "/tmp/t1", "/repo/.git/worktrees/t1", "/home/u/.cache/go-build/x"}},
		{"a reviewer writes nothing of its own", task.Manifest{Writable: []string{}},
			[]string{"/tmp/t1", "/repo/.git/worktrees/t1"}},
		{"a path beyond the policy is not granted", task.Manifest{Writable: []string{".", "/etc"}},
			[]string{"/w/t1", "/tmp/t1", "/repo/.git/worktrees/t1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := NarrowSandbox(base, tc.m, "/w/t1/", userWrite)
			if diff := cmp.Diff(tc.want, got.Write); diff != "" {
				t.Errorf("write (-want +got):\n%s", diff)
			}
			got.Write = base.Write
			if diff := cmp.Diff(base, got); diff != "" {
				t.Errorf("the rest of the policy changed (-want +got):\n%s", diff)
			}
		})
	}
}
