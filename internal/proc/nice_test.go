//go:build linux

package proc_test

import (
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/proc"
)

// niceness is what nice(1) prints: the priority of a process started from
// the calling goroutine's thread.
func niceness(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("nice").Output()
	if err != nil {
		t.Skipf("nice(1): %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("nice printed %q", out)
	}
	return n
}

func TestLowerReachesProcessesStartedAfterIt(t *testing.T) {
	before := niceness(t)
	if before > 9 {
		t.Skipf("this test runs at nice %d already", before)
	}
	var wg sync.WaitGroup
	var lowered, err error
	var got int
	wg.Go(func() {
		if lowered = proc.Lower(10); lowered != nil {
			return
		}
		out, e := exec.Command("nice").Output()
		if e != nil {
			err = e
			return
		}
		got, err = strconv.Atoi(strings.TrimSpace(string(out)))
	})
	wg.Wait()
	if lowered != nil || err != nil {
		t.Fatalf("lowering: %v; nice: %v", lowered, err)
	}
	if got != before+10 {
		t.Errorf("a process started after Lower(10) runs at nice %d, want %d", got, before+10)
	}
	// The lowered thread ended with its goroutine: the rest of the test
	// process is where it was.
	for range 20 {
		if n := niceness(t); n != before {
			t.Fatalf("after the lowered goroutine ended, a process started elsewhere runs at nice %d, want %d", n, before)
		}
	}
}
