package proc

import (
	"bufio"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

func TestSessionEchoesAndStops(t *testing.T) {
	t.Parallel()
	s, err := Start(context.Background(), Cmd{Args: []string{"cat"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stdin.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(s.Stdout).ReadString('\n')
	if err != nil || line != "hello\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	s.Stop()
	<-s.Done()
	if s.ExitCode() != 128+15 {
		t.Errorf("exit code %d, want SIGTERM's", s.ExitCode())
	}
	s.Stop() // again: no effect
}

func TestSessionKillsItsGroup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Cmd{Shell: "sleep 300 & echo $!; cat"})
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(s.Stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	cancel() // the context's end stops the session
	s.Wait()
	testkit.WaitFor(t, "the background sleep to be killed", func() bool { return gone(pid) })
}

func TestSessionKeepsStderrTail(t *testing.T) {
	t.Parallel()
	s, err := Start(context.Background(), Cmd{Shell: "echo first >&2; echo 'it broke' >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	<-s.Done()
	if s.ExitCode() != 3 {
		t.Errorf("exit code %d, want 3", s.ExitCode())
	}
	if tail := s.StderrTail(); !strings.Contains(tail, "it broke") {
		t.Errorf("stderr tail %q", tail)
	}
}

func TestSessionTracked(t *testing.T) {
	t.Parallel()
	tr, err := NewTracker(t.TempDir(), 0)
	if err != nil {
		t.Skip(err)
	}
	s, err := Start(WithOwner(context.Background(), tr, "t-1"), Cmd{Args: []string{"cat"}})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := tr.records(func(Record) bool { return true })
	if err != nil || len(recs) != 1 || recs[0].PGID != s.PID() {
		t.Fatalf("records %+v, %v; want the session's group", recs, err)
	}
	s.Stop()
	if recs, _ := tr.records(func(Record) bool { return true }); len(recs) != 0 {
		t.Fatalf("records after Stop: %+v", recs)
	}
}
