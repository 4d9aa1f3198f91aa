package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
)

// BenchmarkSandboxLauncher measures a bash call (`/bin/sh -c true`) run
// directly and through the launcher: the test binary (small) and the
// neuraphage binary itself (built once, as the daemon runs it). The
// difference per op is what the sandbox adds to each call.
func BenchmarkSandboxLauncher(b *testing.B) {
	st := sandbox.Probe()
	if !st.Available() {
		b.Skipf("this kernel cannot confine commands (%s)", st)
	}
	home, _ := os.UserHomeDir()
	dir := b.TempDir()
	run := func(b *testing.B, l *sandbox.Launcher) {
		c := proc.Cmd{Dir: dir, Shell: "true"}
		for b.Loop() {
			w, err := l.Wrap(c, sandbox.Task{Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			res, err := proc.Run(context.Background(), w)
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%v %d %s", err, res.ExitCode, res.Output)
			}
		}
	}
	deny := sandbox.HomeDenyRead(home, filepath.Join(dir, "data"), filepath.Join(dir, "run"))
	b.Run("direct", func(b *testing.B) { run(b, nil) })
	b.Run("test-binary", func(b *testing.B) {
		run(b, &sandbox.Launcher{Exe: os.Args[0], Status: st, DenyRead: deny})
	})
	b.Run("neuraphage", func(b *testing.B) {
		exe := filepath.Join(b.TempDir(), "neuraphage")
		if out, err := exec.Command("go", "build", "-o", exe, "../../cmd/neuraphage").CombinedOutput(); err != nil {
			b.Skipf("building neuraphage: %v\n%s", err, out)
		}
		b.ResetTimer()
		run(b, &sandbox.Launcher{Exe: exe, Status: st, DenyRead: deny})
	})
}
