//go:build linux

package proc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCgroup2Mount(t *testing.T) {
	t.Parallel()
	v1 := `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
`
	v2 := v1 + `29 23 0:26 / /sys/fs/cgroup/unified\040dir rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate
`
	bind := `30 23 0:26 /sub /mnt/sub rw - cgroup2 cgroup2 rw
`
	for _, tt := range []struct{ in, want string }{
		{v1, ""},
		{v2, "/sys/fs/cgroup/unified dir"},
		{bind, ""}, // a bind mount of a subtree is not the hierarchy's root
		{"", ""},
	} {
		if got := cgroup2Mount(tt.in); got != tt.want {
			t.Errorf("cgroup2Mount(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestUnifiedPath(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"0::/user.slice/user-1000.slice/user@1000.service/app.slice/neuraphage.service\n", "/user.slice/user-1000.slice/user@1000.service/app.slice/neuraphage.service"},
		{"4:memory:/x\n1:cpu:/\n0::/\n", "/"},
		{"4:memory:/x\n1:cpu:/\n", ""},
	} {
		if got := unifiedPath(tt.in); got != tt.want {
			t.Errorf("unifiedPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSafeName(t *testing.T) {
	t.Parallel()
	if got := safeName("../t-1/x"); got != "___t-1_x" {
		t.Errorf("safeName = %q", got)
	}
}

// Where the daemon's cgroup v2 is writable, each command runs in a cgroup
// of its own, which is removed with the command. Machines with cgroup v1
// only (or an undelegated tree) skip it.
func TestRunInACgroup(t *testing.T) {
	t.Parallel()
	tr := newTestTracker(t)
	if tr.Cgroups() == "" {
		t.Skip("no writable cgroup v2 subtree with cgroup.kill here")
	}
	res, err := Run(WithOwner(context.Background(), tr, "task-cg"), Cmd{Shell: "setsid sleep 1000 >/dev/null 2>&1 & cat /proc/self/cgroup"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "/neuraphage-task-cg/") {
		t.Errorf("the command ran in %q, not in its cgroup", res.Output)
	}
	if _, err := os.Stat(filepath.Join(tr.Cgroups(), "neuraphage-task-cg")); !os.IsNotExist(err) {
		t.Errorf("the task's cgroup is still there (%v)", err)
	}
}
