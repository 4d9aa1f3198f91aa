package claude

import (
	"context"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/enginetest"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestQuestion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ final, want string }{
		{"Done.", ""},
		{"", ""},
		{"Which one?\n[NEEDS INPUT] Should the file say hi or hello?", "Should the file say hi or hello?"},
		{"[NEEDS INPUT]: Which port?  \n\n", "Which port?"},
		{"Should I delete the old config?\n[NEEDS INPUT]", "Should I delete the old config?"},
		{"[NEEDS INPUT]", "Claude Code asks for your input."},
		// Only the last line counts: the marker quoted inside a reply is
		// not a question.
		{"The docs say to write [NEEDS INPUT] when asking.\nDone.", ""},
		{"[NEEDS INPUT] Which?\nNever mind, I picked one.", ""},
		{"I wrote `[NEEDS INPUT] x` into notes.txt", ""},
		// The question is one printable line.
		{"[NEEDS INPUT] Pick \x1b[31mred\x1b[0m or blue", `Pick \x1b[31mred\x1b[0m or blue`},
	} {
		if got := question(c.final); got != c.want {
			t.Errorf("question(%q) = %q, want %q", c.final, got, c.want)
		}
	}
	if got := question("[NEEDS INPUT] " + strings.Repeat("why ", 500)); len(got) > maxQuestion+len("…") {
		t.Errorf("a long question is %d bytes, want it clipped to %d", len(got), maxQuestion)
	}
}

// TestFakeQuestionWaitsAndReplyResumes: a turn whose final line asks the
// user (QuestionMarker) ends the run waiting with the question, observed as
// agent.needs_input; the user's reply resumes the same session (--resume)
// and goes to the CLI, whose next turn completes the task.
func TestFakeQuestionWaitsAndReplyResumes(t *testing.T) {
	t.Parallel()
	eng, dir := fakeEngine(t, "question.jsonl", "resume")
	tk := task.Task{ID: "t-fakeq", Description: "greeting task: write a greeting"}
	h := enginetest.NewHost(tk)
	wd := t.TempDir()
	o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: wd, Host: h})
	if o.Status != engine.Waiting || o.Reason != "Which greeting should made.txt hold?" {
		t.Fatalf("outcome = %+v, want waiting with the question", o)
	}
	if !h.Has(event.KindNeedsInput, func(p event.Payload) bool {
		return p.(event.NeedsInput).Question == "Which greeting should made.txt hold?"
	}) {
		t.Fatal("no agent.needs_input with the question")
	}
	if h.Has(event.KindCompleted, nil) {
		t.Fatal("a question completed the task")
	}
	id := h.Inject(inject.Message, "say hi", false)
	o = eng.Run(context.Background(), engine.Run{Task: tk, Dir: wd, Host: h})
	if o.Status != engine.Completed || o.Reason != "Done: made.txt says hi." {
		t.Fatalf("outcome after the reply = %+v", o)
	}
	if !h.Delivered(id) {
		t.Fatal("the reply has no receipt")
	}
	runs := readFakeLog(t, dir)
	if len(runs) != 2 {
		t.Fatalf("%d CLI processes, want 2", len(runs))
	}
	if !hasArgs(runs[0].Args, "--append-system-prompt", systemPrompt) {
		t.Errorf("args %q do not tell the CLI how to ask", runs[0].Args)
	}
	if !hasArgs(runs[1].Args, "--resume", SessionID(tk.ID)) {
		t.Errorf("the reply's run %q does not resume the session", runs[1].Args)
	}
	if in := runs[1].Stdin; len(in) != 1 || !strings.Contains(in[0], "say hi") {
		t.Errorf("the resumed CLI was sent %q, want the reply", in)
	}
}
