package lifecycle

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func testPolicy() Policy {
	return PolicyFrom(config.DefaultSandbox(), "/home/u", []string{"/home/u/.ssh"})
}

func TestDefault(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	p.Write = []string{"/home/u/.cache/go-build"}
	for _, tc := range []struct {
		name string
		t    task.Task
		env  []string
		want task.Manifest
	}{
		{
			name: "a medium task gets the policy's tools and timeouts",
			t:    task.Task{Description: "make the session cookie last a week", Persona: "senior"},
			env:  []string{"PORT=8080", "bad name=x"},
			want: task.Manifest{Readable: []string{"."}, Writable: []string{"."}, Tools: []string{"Read", "Write", "Edit", "Glob", "Grep", "Bash"},
				Env: []string{"PORT"}, Complexity: task.Medium, IdleTimeoutSecs: 900, TotalTimeoutSecs: 7200, Source: "default"},
		},
		{
			name: "a typo is low: half the timeouts",
			t:    task.Task{Description: "fix a typo in the README"},
			want: task.Manifest{Readable: []string{"."}, Writable: []string{"."}, Tools: []string{"Read", "Write", "Edit", "Glob", "Grep", "Bash"},
				Complexity: task.Low, IdleTimeoutSecs: 450, TotalTimeoutSecs: 3600, Source: "default"},
		},
		{
			name: "a reviewer reads, a refactor is high, secrets are named not valued",
			t:    task.Task{Description: "review the refactor of the auth layer; it pushes with $GITHUB_TOKEN and AWS_SECRET_KEY=hunter2", Persona: "reviewer"},
			want: task.Manifest{Readable: []string{"."}, Writable: []string{"."}, Tools: []string{"Read", "Glob", "Grep", "Bash"},
				Secrets: []string{"GITHUB_TOKEN", "AWS_SECRET_KEY"}, Complexity: task.High, IdleTimeoutSecs: 1800, TotalTimeoutSecs: 14400, Source: "default"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Default(tc.t, p, tc.env)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Default (-want +got):\n%s", diff)
			}
			// Deterministic: the same task gives the same manifest.
			if diff := cmp.Diff(got, Default(tc.t, p, tc.env)); diff != "" {
				t.Errorf("Default is not deterministic:\n%s", diff)
			}
		})
	}
}

func TestClampKeepsTheManifestWithinThePolicy(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	p.Write = []string{"/home/u/.cache/go-build"}
	m := task.Manifest{
		Readable:         []string{".", "../other-task", "/home/u/.ssh/id_ed25519", "/home/u", "/usr/share/doc", "src/"},
		Writable:         []string{".", "/etc", "/home/u/.cache/go-build/x", "a/../../b", "src", "src"},
		Tools:            []string{"Read", "Task", "Bash", "WebFetch"},
		Commands:         []string{"go test", "", "echo \x1b[2J"},
		Env:              []string{"PORT", "1BAD"},
		Secrets:          []string{"GH_TOKEN", "a b"},
		Complexity:       "enormous",
		IdleTimeoutSecs:  1 << 30,
		TotalTimeoutSecs: -5,
	}
	got, dropped := Clamp(m, p)
	want := task.Manifest{
		Readable:         []string{".", "/usr/share/doc", "src"},
		Writable:         []string{".", "/home/u/.cache/go-build/x", "src"},
		Tools:            []string{"Read", "Bash"},
		Commands:         []string{"go test"},
		Env:              []string{"PORT"},
		Secrets:          []string{"GH_TOKEN"},
		Complexity:       task.Medium,
		IdleTimeoutSecs:  1800,
		TotalTimeoutSecs: 0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Clamp (-want +got):\n%s", diff)
	}
	for _, d := range []string{`tool "Task"`, `tool "WebFetch"`, `readable "/home/u/.ssh/id_ed25519"`, `readable "/home/u"`, `readable "../other-task"`, `writable "/etc"`, `writable "a/../../b"`, "complexity enormous"} {
		if !slices.Contains(dropped, d) {
			t.Errorf("dropped = %q, want it to list %s", dropped, d)
		}
	}
}

func TestTimeoutsOff(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	p.IdleSecs, p.TotalSecs = 0, 0
	m := Default(task.Task{Description: "x"}, p, nil)
	if m.IdleTimeoutSecs != 0 || m.TotalTimeoutSecs != 0 {
		t.Errorf("timeouts %d/%d with the policy's off, want 0/0", m.IdleTimeoutSecs, m.TotalTimeoutSecs)
	}
	m.IdleTimeoutSecs = 60 // a manifest may still shorten: here, set one
	if got, _ := Clamp(m, p); got.IdleTimeoutSecs != 60 {
		t.Errorf("Clamp took the idle timeout to %d, want 60", got.IdleTimeoutSecs)
	}
}

func TestCurrent(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	bare := task.Task{Description: "fix a typo"}
	if diff := cmp.Diff(Default(bare, p, nil), Current(bare, p)); diff != "" {
		t.Errorf("no stored manifest (-want +got):\n%s", diff)
	}
	stored := task.Manifest{Tools: []string{"Read"}, Source: "model"}
	bare.Manifest = &stored
	if diff := cmp.Diff(stored, Current(bare, p)); diff != "" {
		t.Errorf("stored manifest (-want +got):\n%s", diff)
	}
}
