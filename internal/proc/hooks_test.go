package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRunHooks: Before runs before the command starts, After once it has
// ended (what it wrote is there), each once; a Before that fails starts
// nothing and runs no After.
func TestRunHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	var seen []string
	c := Cmd{Shell: "echo x > " + mark,
		Before: func() error {
			if _, err := os.Stat(mark); err == nil {
				seen = append(seen, "before after the command")
			}
			seen = append(seen, "before")
			return nil
		},
		After: func() {
			if _, err := os.Stat(mark); err != nil {
				seen = append(seen, "after before the command")
			}
			seen = append(seen, "after")
		},
	}
	if res, err := Run(context.Background(), c); err != nil || res.ExitCode != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	if !slices.Equal(seen, []string{"before", "after"}) {
		t.Errorf("hooks ran as %q", seen)
	}

	seen = nil
	refused := errors.New("refused")
	c.Shell = "echo y > " + filepath.Join(dir, "second")
	c.Before = func() error { return refused }
	if _, err := Run(context.Background(), c); !errors.Is(err, refused) {
		t.Errorf("Run with a failing Before: %v, want its error", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "second")); err == nil || len(seen) != 0 {
		t.Errorf("the command ran, or After did (%q)", seen)
	}
}

// TestSessionHooks: a Session runs Before before its child starts and
// After once, when it is stopped and its group is gone; a child that
// cannot start runs After at once.
func TestSessionHooks(t *testing.T) {
	t.Parallel()
	befores, afters := 0, 0
	c := Cmd{Args: []string{"cat"}, Before: func() error { befores++; return nil }, After: func() { afters++ }}
	s, err := Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if befores != 1 || afters != 0 {
		t.Fatalf("running: Before %d, After %d; want 1, 0", befores, afters)
	}
	s.Stop()
	s.Stop()
	if afters != 1 {
		t.Errorf("stopped: After ran %d times, want once", afters)
	}
	c.Args = []string{filepath.Join(t.TempDir(), "no-such-program")}
	if _, err := Start(context.Background(), c); err == nil {
		t.Fatal("a missing program started")
	}
	if befores != 2 || afters != 2 {
		t.Errorf("not started: Before %d, After %d; want 2, 2", befores, afters)
	}
}
