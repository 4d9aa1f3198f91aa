package stuck

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
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

// isReadSlow is isRead as it was: the arguments decoded by encoding/json,
// the command split with a strings.Replacer and strings.Fields.
func isReadSlow(tool string, args json.RawMessage) bool {
	if readTools[tool] {
		return true
	}
	if tool != "bash" {
		return false
	}
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &a) != nil || strings.TrimSpace(a.Command) == "" {
		return false
	}
	cmd := strings.NewReplacer("&&", ";", "||", ";", "|", ";").Replace(a.Command)
	for part := range strings.SplitSeq(cmd, ";") {
		if f := strings.Fields(part); len(f) > 0 && !isReadCommand(f) {
			return false
		}
	}
	return true
}

func checkIsRead(t *testing.T, args string) {
	t.Helper()
	if got, want := isRead("bash", json.RawMessage(args)), isReadSlow("bash", json.RawMessage(args)); got != want {
		t.Errorf("isRead(bash %s) = %v, as it was %v", args, got, want)
	}
}

func TestIsReadEqualsTheSlowPath(t *testing.T) {
	t.Parallel()
	pieces := []string{"cat", "ls", "sed", "-n", "-i", "git", "log", "commit", "cd", "echo", " ", "\t", "\v", "\u00a0",
		"&", "&&", "|", "||", ";", ">", "<", "a.go", "/usr/bin/grep", "x", "é"}
	r := rand.New(rand.NewPCG(7, 11))
	for range 5000 {
		var b strings.Builder
		for range r.IntN(10) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		c, _ := json.Marshal(b.String())
		for _, args := range []string{
			`{"command":` + string(c) + `}`,
			`{"Command":` + string(c) + `,"command":"ls"}`,
			`{"command":"ls","COMMAND":` + string(c) + `}`,
			`{"command":` + string(c) + `,"timeout":3}`,
			`{"commånd":` + string(c) + `}`,
			`{"command":` + string(c),
		} {
			checkIsRead(t, args)
		}
		if t.Failed() {
			return
		}
	}
}

func FuzzIsRead(f *testing.F) {
	for _, s := range []string{`{"command":"cat a && ls | wc -l"}`, `{"Command":"sed -n 1p a"}`, `{"command":"a &&& b"}`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(checkIsRead)
}
