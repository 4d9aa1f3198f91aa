package stuck

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The replay corpus: testdata/corpus holds the scripted runs of this
// package's tests as event streams, in the format `watcher replay` reads,
// so they can be replayed by hand and scored like any recorded run. A file
// named healthy_*.jsonl must give no actionable verdict; stuck_CHECK_*.jsonl
// must give a CHECK verdict. go test -run TestReplayCorpus -update rewrites
// them from the tests' builders.

var update = flag.Bool("update", false, "rewrite testdata/corpus from the scripted runs")

const corpusDir = "testdata/corpus"

var unsafeName = regexp.MustCompile(`[^a-z0-9]+`)

func corpusName(prefix, name string) string {
	return prefix + strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(name), "-"), "-") + ".jsonl"
}

func writeCorpus(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(corpusDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, s *stream) {
		// A replay knows no worktree: the runs' paths are written relative.
		text := strings.ReplaceAll(jsonl(t, s.events()), testRoot, ".")
		if err := os.WriteFile(filepath.Join(corpusDir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range append(healthyCases(), healthyTraps()...) {
		if strings.HasPrefix(c.name, "200 iterations") {
			continue // half a megabyte; TestHealthyScenarios runs it
		}
		s := newStream(task.ID("t-healthy"))
		c.build(s)
		write(corpusName("healthy_", c.name), s)
	}
	for _, c := range append(stuckCases(), newPatterns()...) {
		if c.check == NoProgress { // found by Tick between events; a replay ticks only at events
			continue
		}
		s := newStream(task.ID("t-stuck"))
		c.build(s)
		name := c.name
		if i := strings.IndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		write(corpusName("stuck_"+string(c.check)+"_", name), s)
	}
}

func TestReplayCorpus(t *testing.T) {
	t.Parallel()
	if *update {
		writeCorpus(t)
	}
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in %s (%v): go test -run TestReplayCorpus -update", corpusDir, err)
	}
	for _, f := range files {
		base := filepath.Base(f)
		t.Run(base, func(t *testing.T) {
			t.Parallel()
			r, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			evs, err := ReadJSONL(r)
			if err != nil {
				t.Fatal(err)
			}
			vs := Replay(evs, Config{})
			var acted []Verdict
			for _, v := range vs {
				if !v.Tier2Only || v.Confirm {
					acted = append(acted, v)
				}
			}
			switch {
			case strings.HasPrefix(base, "healthy_"):
				for _, v := range vs {
					if !v.Tier2Only {
						t.Errorf("healthy run flagged at line %d: %s", v.Line, v.Finding)
					}
				}
			case strings.HasPrefix(base, "stuck_"):
				check := strings.SplitN(strings.TrimPrefix(base, "stuck_"), "_", 2)[0]
				found := false
				for _, v := range vs {
					found = found || string(v.Check) == check
				}
				if !found {
					t.Errorf("no %s verdict; got %v", check, acted)
				}
			}
		})
	}
}
