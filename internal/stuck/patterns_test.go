package stuck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// newPatterns are the stuck patterns tier 1 missed before it tracked state
// and call identity; each must be found at or before its count.
func newPatterns() []stuckCase {
	const pay = "internal/pay/pay.go"
	fail := "--- FAIL: TestCharge (0.00s)\n    pay_test.go:88: Charge(100) = <nil>, want ErrLimit\nFAIL"
	return []stuckCase{
		{name: "alternation/rewriting a file with the same content", check: Alternation, want: 4, unit: "failures",
			build: func(s *stream) {
				s.prelude()
				for range 5 {
					s.turn("Rewriting pay.go with the fix.", write(pay, payGo))
					s.turn("", bash("go test ./internal/pay/", fail).failed())
					s.mark(event.KindToolResult)
				}
			}},
		{name: "same-failure/edits that return the tree to an earlier state (A → B → A)", check: SameFailure, want: 5, unit: "failures",
			build: func(s *stream) {
				s.prelude()
				for range 3 {
					s.turn("Trying <=.", edit(pay, "amount < 0", "amount <= 0"))
					s.turn("", bash("go test ./internal/pay/", fail).failed())
					s.mark(event.KindToolResult)
					s.turn("Back to <.", edit(pay, "amount <= 0", "amount < 0"))
					s.turn("", bash("go test ./internal/pay/", fail).failed())
					s.mark(event.KindToolResult)
				}
			}},
		{name: "circles/edits going round three versions (A → B → C → A)", check: Circles, want: 4, unit: "returns", named: true, min: 4,
			build: func(s *stream) {
				// Each version fails its own way, so no failure repeats in a
				// row: only the files' states show the loop.
				s.prelude()
				steps := []struct{ old, new, fail string }{
					{"amount < 0", "amount <= 0", "pay_test.go:88: Charge(0) = ErrNegative, want nil"},
					{"amount <= 0", "amount <= limit", "pay_test.go:91: Charge(-1) = nil, want ErrNegative"},
					{"amount <= limit", "amount < 0", "pay_test.go:95: Charge(500) = nil, want ErrLimit"},
				}
				for i := range 7 {
					st := steps[i%3]
					s.turn("Another way to write the check.", edit(pay, st.old, st.new))
					if i >= 2 {
						s.mark(event.KindFileChanged)
					}
					s.turn("", bash("go test ./internal/pay/", "--- FAIL: TestCharge (0.00s)\n    "+st.fail+"\nFAIL").failed())
				}
			}},
		{name: "circles/shell commands cycling a file through three versions", check: Circles, want: 4, unit: "returns", named: true, min: 4,
			build: func(s *stream) {
				s.prelude()
				versions := []string{payGo + "// v1\n", payGo + "// v2\n", payGo + "// v3\n"}
				for i := range 7 {
					v := i%3 + 1
					s.turn("Trying the saved version.", shell(fmt.Sprintf("cp /tmp/pay-v%d.go internal/pay/pay.go", v), "", pay, versions[v-1]))
					if i >= 3 {
						s.mark(event.KindFileChanged)
					}
					s.turn("", bash("go vet ./internal/pay/ && go run ./cmd/report", fmt.Sprintf("report: %d rows, version %d", 40+v, v)))
				}
			}},
		{name: "repeat/a shell command rewriting a file with the same bytes between runs", check: Repeat, want: 5, unit: "runs", named: true, min: 4,
			build: func(s *stream) {
				// go generate rewrites gen.go every time (a new mtime, so git
				// status sees a change) with the same bytes: not progress.
				s.prelude()
				for range 6 {
					s.turn("Regenerating and running the report.", shell("go generate ./... && go run ./cmd/report", "report: 0 rows (the ledger is empty)",
						"internal/pay/gen.go", "// Code generated; DO NOT EDIT.\npackage pay\n\nvar table = []int{1, 2, 3}\n"))
					s.mark(event.KindToolResult)
				}
			}},
		{name: "same-failure/edits that leave the same check failing", check: SameFailure, want: 5, unit: "failures",
			build: func(s *stream) {
				s.prelude()
				for i := range 5 {
					s.turn("Another fix.", edit(pay, fmt.Sprintf("limit%d", i), fmt.Sprintf("limit%d", i+1)))
					s.turn("", bash("go test ./internal/pay/", fail).failed())
					s.mark(event.KindToolResult)
				}
			}},
		{name: "same-failure/the same failure through varying calls", check: SameFailure, want: 5, unit: "failures",
			build: func(s *stream) {
				s.prelude()
				for _, cmd := range []string{"go build ./...", "go vet ./internal/pay", "go test ./internal/pay/", "go build ./cmd/shop", "go run ./cmd/shop"} {
					s.turn("", bash(cmd, buildErr).failed())
					s.mark(event.KindToolResult)
				}
			}},
		{name: "talk/turns without tool calls broken by filler", check: Talk, want: 5, unit: "turns",
			build: func(s *stream) {
				s.prelude()
				for i := range 6 {
					s.turn([]string{"Let me think about this.", "OK.", "I will now look at the ledger.", "Continuing.", "Right, next step.", "Hmm."}[i])
					s.mark(event.KindTurnEnded)
				}
			}},
		{name: "model-errors/failed model calls and resumes", check: ModelErrors, want: 4, unit: "failures",
			build: func(s *stream) {
				s.prelude()
				for range 4 {
					s.turns++
					s.emit(event.TurnStarted{Turn: s.turns, Engine: s.engine})
					s.emit(event.ModelError{Turn: s.turns, Class: "server", Message: "529 overloaded"})
					s.mark(event.KindModelError)
					s.status(task.Running, task.Paused)
					s.status(task.Paused, task.Running)
				}
			}},
		{name: "model-errors/restarts after failing, without progress", check: ModelErrors, want: 4, unit: "restarts",
			build: func(s *stream) {
				s.prelude()
				for range 4 {
					s.turn("", bash("go build ./...", buildErr).failed())
					s.status(task.Running, task.Failed)
					s.status(task.Failed, task.Running)
					s.mark(event.KindTaskStatus)
				}
			}},
		{name: "failing/a loop broken by a question and its answer", check: Failing, want: 3, unit: "failures",
			build: func(s *stream) {
				s.prelude()
				for i := range 3 {
					s.turn("Building again.", bash("go build ./...", buildErr).failed())
					s.mark(event.KindToolResult)
					if i == 1 {
						s.turn("Should I add the ledger import?")
						s.emit(event.NeedsInput{Turn: s.turns, Question: "Should I add the ledger import?"})
						s.status(task.Running, task.Waiting)
						s.status(task.Waiting, task.Running)
					}
				}
			}},
		{name: "reask/the same question, reworded, after answers", check: Reask, want: 3, unit: "questions",
			build: func(s *stream) {
				s.prelude()
				for _, q := range []string{"Should charges be in EUR or USD?", "Which currency do you want: USD or EUR?", "To be sure: EUR or USD for charges?"} {
					s.turn(q)
					s.emit(event.NeedsInput{Turn: s.turns, Question: q})
					s.mark(event.KindNeedsInput)
					s.status(task.Running, task.Waiting)
					s.status(task.Waiting, task.Running)
				}
			}},
		{name: "persist/the same call, its result changing only in noise", check: Persist, want: 8, unit: "calls",
			build: func(s *stream) {
				s.prelude()
				for i := range 9 {
					s.turn("", bash("curl -s localhost:8080/health", fmt.Sprintf("request %d served by worker-%d: status degraded (queue %d)", 4711+i, i%3, 17+i)))
					s.mark(event.KindToolResult)
				}
			}},
		{name: "wandering/reading without change, to confirm", check: Wandering, want: 60, unit: "results", tier2: true,
			build: func(s *stream) {
				for i := range 61 {
					s.turn("", read(fmt.Sprintf("internal/pkg%02d/doc.go", i), "// Package pkg"+fmt.Sprint(i)+" does part "+fmt.Sprint(i)+" of the shop.\npackage pkg"))
					s.mark(event.KindToolResult)
				}
			}},
	}
}

func TestNewPatterns(t *testing.T) {
	t.Parallel()
	for _, c := range newPatterns() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newStream("t-stuck")
			c.build(s)
			hs := run(s, Config{}, true)
			var h hit
			ok := false
			for _, x := range hs {
				if x.f.Check == c.check && (c.check != Wandering || x.f.Confirm) {
					h, ok = x, true
					break
				}
			}
			if !ok {
				t.Fatalf("no %s finding; got:%s", c.check, describe(t, s.items, hs))
			}
			if h.occ > c.want {
				t.Errorf("%s found at occurrence %d, want at or before %d:%s", c.check, h.occ, c.want, describe(t, s.items, hs))
			}
			if len(h.f.Evidence) == 0 || h.f.Diagnosis == "" {
				t.Errorf("finding without evidence or diagnosis: %+v", h.f)
			}
			if h.f.Tier2Only != c.tier2 {
				t.Errorf("Tier2Only = %v, want %v", h.f.Tier2Only, c.tier2)
			}
		})
	}
}

// A call's identity keeps its numbers, paths and ranges; whitespace,
// quoting, flag order, temp paths and the worktree root do not count.
func TestCallIdentity(t *testing.T) {
	t.Parallel()
	d := New(Config{}, testRoot, t0)
	same := func(a, b string) bool {
		ka, kb := CanonicalCall("bash", args("command", a), testRoot), CanonicalCall("bash", args("command", b), testRoot)
		return d.sameCall(&Step{Tool: "bash", key: ka, kw: keyWords(ka)}, &Step{Tool: "bash", key: kb, kw: keyWords(kb)})
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"echo step-1 && sleep 1", "echo step-2 && sleep 1", false},
		{"sed -n '1,40p' pay.go", "sed -n '41,80p' pay.go", false},
		{"ls dir0", "ls dir1", false},
		{"touch file1.txt", "touch file2.txt", false},
		{"gh run view 4242", "gh run view 4243", false},
		{"go  test   -race ./...", `go test "-race" ./...`, true},
		{"go test -race ./internal/pay/...", "go test ./internal/pay/... -race", true},
		{"cat " + testRoot + "/go.mod", "cat ./go.mod", true},
		{"ls /tmp/go-build123/b001", "ls /tmp/go-build987/b001", true},
	} {
		if got := same(c.a, c.b); got != c.want {
			t.Errorf("same call %q / %q = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	ed := func(old string) string {
		return CanonicalCall("edit_file", args("path", "pay.go", "old_text", old, "new_text", "x"), testRoot)
	}
	if ed("a  b\n") != ed("a b") {
		t.Errorf("whitespace in an edit's text changed its identity")
	}
}

func TestMaskResultKeepsNumbers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ a, b string }{
		{"step-1", "step-2"},
		{"jobs: 3 of 9 completed", "jobs: 4 of 9 completed"},
	} {
		if MaskResult(c.a) == MaskResult(c.b) {
			t.Errorf("MaskResult made %q and %q equal", c.a, c.b)
		}
	}
	for _, c := range []struct{ a, b string }{
		{"ok  \tgithub.com/acme/shop\t0.412s", "ok  \tgithub.com/acme/shop\t1.9s"},
		{"at 2026-11-21T09:03:07Z id 3f2a9c1e77", "at 2026-11-21T10:13:57Z id 9b8a1d0c42"},
		{"pay.go:88:5: undefined: x", "pay.go:91:2: undefined: x"},
		{"* test in 7s", "* test in 1m37s"},
	} {
		if MaskResult(c.a) != MaskResult(c.b) {
			t.Errorf("MaskResult(%q) = %q, MaskResult(%q) = %q; want equal", c.a, MaskResult(c.a), c.b, MaskResult(c.b))
		}
	}
	_ = strings.Repeat
}

// Progress by state: rewriting the same bytes, or edits that take a file
// back, are not progress; other changes are.
func TestProgressByState(t *testing.T) {
	t.Parallel()
	d := New(Config{}, testRoot, t0)
	s := newStream("t-state")
	s.prelude()
	step := func(c call) int {
		s.items = s.items[:0]
		s.turn("", c)
		before := d.Counters().Progress
		feed(d, s.items, false)
		return d.Counters().Progress - before
	}
	feed(d, s.items, false)
	const pay = "internal/pay/pay.go"
	for _, c := range []struct {
		name string
		c    call
		want bool
	}{
		{"first write", write(pay, "v1"), true},
		{"the same bytes again", write(pay, "v1"), false},
		{"an edit A → B", edit(pay, "v1", "v2"), true},
		{"the edit undone B → A", edit(pay, "v2", "v1"), false},
		{"B again", edit(pay, "v1", "v2"), false},
		{"new content", write(pay, "v3"), true},
		{"an edit v3 → v4", edit(pay, "v3", "v4"), true},
		{"another v4 → v5", edit(pay, "v4", "v5"), true},
		{"back to v3 (A → B → C → A)", edit(pay, "v5", "v3"), false},
		{"a shell command leaving content x", shell("gofmt -w .", "", pay, "x"), true},
		{"the same bytes rewritten by the shell", shell("gofmt -w .", "", pay, "x"), false},
		{"the shell changing the content", shell("gofmt -w .", "", pay, "y"), true},
		{"the shell restoring x", shell("git stash pop", "", pay, "x"), false},
		{"another file, same content", write("internal/pay/other.go", "v3"), true},
	} {
		// A change is progress when the count moves by the file change (the
		// edit's own result is a fresh result only the first time).
		got := step(c.c) > 0 && d.epoch != 0
		if c.want && !got {
			t.Errorf("%s: not progress, want progress", c.name)
		}
		if !c.want && d.sinceFS == 0 {
			t.Errorf("%s: counted as a change of state", c.name)
		}
	}
}
