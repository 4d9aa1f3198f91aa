package lifecycle

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func recoverPolicy(s Strategy) Policy {
	p := testPolicy()
	p.Write = []string{"/home/u/.cache"}
	p.Recovery = s
	p.MaxEscalations = 2
	return p
}

func readOnly() task.Manifest {
	return task.Manifest{Readable: []string{"."}, Writable: []string{"src"}, Tools: []string{"Read", "Glob", "Grep", "Bash"},
		Commands: []string{"go test"}, Complexity: task.Medium, Source: "default"}
}

func TestComputeFix(t *testing.T) {
	t.Parallel()
	p := recoverPolicy(Moderate)
	for _, tc := range []struct {
		name string
		d    event.PermissionDenied
		want Fix
		err  string
	}{
		{"a tool the policy allows", event.PermissionDenied{Tool: "Edit", Path: "src/a.go", Write: true}, Fix{Tool: "Edit"}, ""},
		{"a tool beyond the policy", event.PermissionDenied{Tool: "Task"}, Fix{}, "tool Task is beyond the policy"},
		{"a write outside the manifest's paths, in the worktree", event.PermissionDenied{Tool: "Bash", Path: "docs/x.md", Write: true}, Fix{Writable: "docs/x.md"}, ""},
		{"a write within the policy's paths", event.PermissionDenied{Tool: "Bash", Path: "/home/u/.cache/go-build/ab", Write: true}, Fix{Writable: "/home/u/.cache/go-build/ab"}, ""},
		{"a write beyond the policy", event.PermissionDenied{Tool: "Bash", Path: "/etc/passwd", Write: true}, Fix{}, "writing /etc/passwd is beyond the policy"},
		{"a write out of the worktree", event.PermissionDenied{Tool: "Bash", Path: "../other/x", Write: true}, Fix{}, "beyond the policy"},
		{"a secret's read", event.PermissionDenied{Tool: "Read", Path: "/home/u/.ssh/id_rsa"}, Fix{}, "reading /home/u/.ssh/id_rsa is beyond the policy"},
		{"a command not listed", event.PermissionDenied{Tool: "Bash", Command: "go  build ./..."}, Fix{Command: "go build"}, ""},
		{"a listed command denied elsewhere", event.PermissionDenied{Tool: "Bash", Command: "go test ./..."}, Fix{}, "already allows it"},
		{"a chained line: its first command not listed", event.PermissionDenied{Tool: "Bash", Command: "go test ./... && git push origin x"}, Fix{Command: "git push"}, ""},
		{"a chained line hiding a substitution", event.PermissionDenied{Tool: "Bash", Command: "go test $(rm -rf src)"}, Fix{}, "cannot be allowed"},
		{"a write the manifest allows", event.PermissionDenied{Tool: "Bash", Path: "src/x", Write: true}, Fix{}, "came from elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ComputeFix(readOnly(), tc.d, p)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ComputeFix = %+v, %v; want an error saying %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ComputeFix = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestModerateStopsAtMaxEscalations(t *testing.T) {
	t.Parallel()
	r := Recoverer{Policy: recoverPolicy(Moderate)}
	m := readOnly()
	denials := []event.PermissionDenied{
		{Tool: "Edit", Path: "src/a.go", Write: true},
		{Tool: "Write", Path: "README.md", Write: true},
		{Tool: "Bash", Command: "make lint"},
	}
	var actions []Action
	for _, d := range denials {
		dec := r.Decide(m, d)
		actions = append(actions, dec.Action)
		m = dec.Manifest
	}
	if diff := cmp.Diff([]Action{Retry, Retry, GiveUp}, actions); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if m.Escalations != 2 || m.Source != "default+recovered" {
		t.Errorf("escalations %d, source %q; want 2, default+recovered", m.Escalations, m.Source)
	}
	want := []string{"Read", "Glob", "Grep", "Bash", "Edit", "Write"}
	if diff := cmp.Diff(want, m.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	dec := r.Decide(m, denials[2])
	perm, ok := dec.Events[0].(event.PermissionError)
	if !ok || !strings.Contains(perm.Reason, "widened 2 times") {
		t.Errorf("events %+v, want a permission error saying the escalations are spent", dec.Events)
	}
	if at, ok := dec.Events[1].(event.RecoveryAttempt); !ok || at.Action != "give_up" || at.Strategy != "moderate" {
		t.Errorf("events %+v, want a recovery attempt that gives up", dec.Events)
	}
}

func TestAggressiveGoesOnUntilCannotFix(t *testing.T) {
	t.Parallel()
	r := Recoverer{Policy: recoverPolicy(Aggressive)}
	m := readOnly()
	for i, cmd := range []string{"make lint", "npm test", "cargo build", "go build"} {
		dec := r.Decide(m, event.PermissionDenied{Tool: "Bash", Command: cmd})
		if dec.Action != Retry {
			t.Fatalf("denial %d: %s (%s), want retry", i, dec.Action, dec.Reason)
		}
		m = dec.Manifest
	}
	if dec := r.Decide(m, event.PermissionDenied{Tool: "Task"}); dec.Action != GiveUp {
		t.Errorf("a fix beyond the policy: %s, want give_up", dec.Action)
	}
}

func TestInteractiveAsks(t *testing.T) {
	t.Parallel()
	r := Recoverer{Policy: recoverPolicy(Interactive)}
	dec := r.Decide(readOnly(), event.PermissionDenied{Tool: "Bash", Path: "docs/x.md", Write: true})
	if dec.Action != Ask || !strings.Contains(dec.Question, "writing docs/x.md") || !strings.Contains(dec.Question, "make docs/x.md writable") {
		t.Fatalf("decision %+v, want a question about writing docs/x.md", dec)
	}
	// Nothing is widened before the answer: the fix waits in the manifest.
	if dec.Manifest.Escalations != 0 || len(dec.Manifest.Writable) != 1 || dec.Manifest.Pending == nil || dec.Manifest.Pending.Writable != "docs/x.md" {
		t.Fatalf("manifest to store while asking: %+v", dec.Manifest)
	}
	p := recoverPolicy(Interactive)
	yes, widened, ev := Answer(dec.Manifest, "allow", p)
	if !widened || yes.Pending != nil || yes.Escalations != 1 || yes.Writable[len(yes.Writable)-1] != "docs/x.md" {
		t.Errorf("approved: %+v, %t", yes, widened)
	}
	if at, ok := ev.(event.RecoveryAttempt); !ok || at.Action != "retry" {
		t.Errorf("approved: event %+v", ev)
	}
	no, widened, ev := Answer(dec.Manifest, "no, leave the docs alone", p)
	if widened || no.Pending != nil || no.Escalations != 0 || len(no.Writable) != 1 {
		t.Errorf("declined: %+v, %t", no, widened)
	}
	if at, ok := ev.(event.RecoveryAttempt); !ok || at.Action != "declined" {
		t.Errorf("declined: event %+v", ev)
	}
	if same, widened, ev := Answer(readOnly(), "allow", p); widened || ev != nil || same.Pending != nil {
		t.Errorf("nothing pending: %+v, %t, %v", same, widened, ev)
	}
	for reply, want := range map[string]bool{"allow": true, "Yes, go ahead": true, "ok.": true, "no": false, "": false, "don't allow": false} {
		if Approves(reply) != want {
			t.Errorf("Approves(%q) = %t", reply, !want)
		}
	}
}

func TestAllowsCommand(t *testing.T) {
	for _, c := range []struct {
		m    task.Manifest
		cmd  string
		want bool
	}{
		{task.Manifest{Tools: []string{"Read", "Bash"}}, "rm -rf build", true},
		{task.Manifest{Tools: []string{"Read"}}, "ls", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, "git  status", true},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, "gitk", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"go test"}}, "go build ./...", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"go test"}}, "go test ./...", true},
		// Every command of a chained line must be allowed, and what cannot
		// be read without running it never is.
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git status"}}, "git status && rm -rf .", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git status"}}, "git status; rm x", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git status"}}, "git status || curl http://x", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git status"}}, "git status | sh", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git status"}}, "git status & rm x", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git status"}}, "git status\nrm x", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, "git log $(rm x)", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, "git log \"$(rm x)\"", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, "git log `rm x`", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git", "cat"}}, "git diff <(cat /etc/passwd)", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, "(git status)", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, "git status; { rm x; }", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, "git commit -m 'unclosed", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, "", false},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git", "go test"}}, "git add -A && go test ./... | git status", true},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, "git commit -m 'a; b && c | d $(e)'", true},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, `git commit -m "a; b && c | d"`, true},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, `git commit -m a\;\ rm`, true},
		{task.Manifest{Tools: []string{"Bash"}, Commands: []string{"git"}}, "git status;", true},
	} {
		if got := AllowsCommand(c.m, c.cmd); got != c.want {
			t.Errorf("AllowsCommand(%+v, %q) = %v, want %v", c.m, c.cmd, got, c.want)
		}
	}
}
