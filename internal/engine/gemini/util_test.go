package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// fakeEngine is the engine on the fake CLI (this test binary) replaying
// fixtures, with mode (crash, noresult, hang) and more variables in env
// (NAME=value). It returns the engine and the fake's log directory.
func fakeEngine(t *testing.T, fixtures string, env ...string) (*Engine, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	td, _ := filepath.Abs("testdata")
	vars := append([]string{"FAKE_GEMINI_DIR=" + dir, "FAKE_GEMINI_FIXTURES=" + fixtures, "FAKE_GEMINI_TESTDATA=" + td}, env...)
	eng := New(Options{
		Command: exe, StateDir: filepath.Join(dir, "state"), UserHome: t.TempDir(),
		Environ:  func() []string { return append(os.Environ(), vars...) },
		EnvAllow: []string{"FAKE_GEMINI_DIR", "FAKE_GEMINI_FIXTURES", "FAKE_GEMINI_TESTDATA", "FAKE_GEMINI_MODE", "FAKE_GEMINI_HANG_TURN"},
		Price:    func(model string, u llm.Usage) float64 { return float64(u.InputTokens+u.OutputTokens) / 1e6 },
	})
	return eng, dir
}

// readFakeLog reads the fake's processes, in order.
func readFakeLog(t *testing.T, dir string) []fakeLog {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fakeLog
	for l := range strings.Lines(string(b)) {
		var e fakeLog
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// hasArgs reports whether args holds want in a row.
func hasArgs(args []string, want ...string) bool {
	for i := range args {
		if i+len(want) <= len(args) && slices.Equal(args[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

func outcome(t *testing.T, done <-chan engine.Outcome) engine.Outcome {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(testkit.WaitLimit):
		t.Fatal("the run did not end")
		return engine.Outcome{}
	}
}
