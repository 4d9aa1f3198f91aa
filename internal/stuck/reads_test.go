package stuck

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestIsRead(t *testing.T) {
	t.Parallel()
	cmd := func(c string) json.RawMessage { b, _ := json.Marshal(map[string]string{"command": c}); return b }
	tests := []struct {
		tool string
		args json.RawMessage
		want bool
	}{
		{"read_file", args("path", "a.go"), true},
		{"glob", args("pattern", "*.go"), true},
		{"grep", args("pattern", "TODO"), true},
		{"write_file", args("path", "a.go"), false},
		{"edit_file", args("path", "a.go"), false},
		{"bash", cmd("cat internal/a.go"), true},
		{"bash", cmd("cd internal && ls -la | wc -l"), true},
		{"bash", cmd("sed -n '10,40p' a.go"), true},
		{"bash", cmd("git log --oneline -5 && git diff HEAD~1"), true},
		{"bash", cmd("/usr/bin/grep -rn TODO ."), true},
		{"bash", cmd("echo step-7"), false},
		{"bash", cmd("sed -i 's/a/b/' a.go"), false},
		{"bash", cmd("cat a.go > b.go"), false},
		{"bash", cmd("git commit -am wip"), false},
		{"bash", cmd("ls; ./migrate step 4"), false},
		{"bash", cmd("  "), false},
		{"bash", json.RawMessage(`not json`), false},
	}
	for _, tt := range tests {
		if got := isRead(tt.tool, tt.args); got != tt.want {
			t.Errorf("isRead(%s %s) = %v, want %v", tt.tool, tt.args, got, tt.want)
		}
	}
}

// The read-without-change budget is for readers: a task running 90
// numbered commands that change no file gets tier 2's look at most, never
// a finding to act on, while one reading 60 files gets one.
func TestReadWithoutChangeCountsReads(t *testing.T) {
	t.Parallel()
	steps := newStream("t-steps")
	for i := range 90 {
		steps.turn("", bash(fmt.Sprintf("./migrate step %d", i+1), fmt.Sprintf("step %d applied", i+1)))
	}
	for _, h := range run(steps, Config{}, true) {
		if h.f.Confirm || !h.f.Tier2Only {
			t.Errorf("numbered steps: finding to act on at %d: %s", h.occ, h.f)
		}
	}
	reader := newStream("t-reader")
	for i := range 60 {
		reader.turn("", bash(fmt.Sprintf("cat internal/pkg%02d/doc.go", i), fmt.Sprintf("// Package pkg%d does part %d.", i, i)))
	}
	var confirm bool
	for _, h := range run(reader, Config{}, true) {
		confirm = confirm || h.f.Check == Wandering && h.f.Confirm
	}
	if !confirm {
		t.Error("60 reads without a change: no finding to confirm")
	}
}
