package extproc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// How every CLI engine delivers injections: at a turn boundary the inbox is
// taken (TakeInbox); pauses end the run, the messages go to the CLI as one
// text (Message) with a delivery marker (Marker), and their receipt is
// committed once the CLI took the text (UserStep). After a crash, a
// marker found in what the CLI stored (Delivered) says it took them.

// ResumeNote is the first message of a resumed session when no other
// waits.
const ResumeNote = "This session was stopped and now continues (a pause, or a restart of Neuraphage or of the CLI). " +
	"Continue the task where you left off; if it is done, say so and stop."

// TaskPrompt is the first message of a new session: the task, its context,
// and how to end.
func TaskPrompt(t task.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your task (%s):\n\n%s\n", t.ID, engine.Neutralize(t.Description))
	if strings.TrimSpace(t.Context) != "" {
		fmt.Fprintf(&b, "\nContext:\n\n%s\n", engine.Neutralize(t.Context))
	}
	b.WriteString("\nWork in the current directory (a git worktree of your own). When the task is done, reply with a short summary of what you did and stop.")
	return b.String()
}

// Inbox is what waits for a task at a turn boundary.
type Inbox struct {
	// Pauses end the run.
	Pauses []inject.Injection
	// Taken are messages the CLI took before a restart: only their
	// receipt was lost.
	Taken []inject.Injection
	// Shown are the messages to deliver.
	Shown []inject.Injection
}

// TakeInbox takes the injections waiting at a turn boundary: the task is
// prepared (latest becomes it), the interrupts signalled so far are
// dropped, and the inbox read; taken reports the messages the CLI already
// took (nil: none).
func TakeInbox(ctx context.Context, h engine.Host, latest *task.Task, taken func(id int64) bool) (Inbox, error) {
	engine.Drain(h.Interrupts())
	t, err := h.Prepare(ctx)
	if err != nil {
		return Inbox{}, fmt.Errorf("preparing the task's messages: %w", err)
	}
	if t.ID != "" {
		*latest = t
	}
	engine.Drain(h.Interrupts())
	inbox, err := h.Inbox(ctx)
	if err != nil {
		return Inbox{}, fmt.Errorf("reading the task's messages: %w", err)
	}
	var in Inbox
	for _, inj := range inbox {
		switch {
		case inj.Kind == inject.Pause:
			in.Pauses = append(in.Pauses, inj)
		case taken != nil && taken(inj.ID):
			in.Taken = append(in.Taken, inj)
		default:
			in.Shown = append(in.Shown, inj)
		}
	}
	return in, nil
}

// Acknowledge commits the receipts of the messages taken and of the
// pauses; a pause ends the run (stop), paused with its text.
func (in Inbox) Acknowledge(ctx context.Context, turn int, now time.Time, commit func(context.Context, engine.Step) error) (out engine.Outcome, stop bool, err error) {
	if len(in.Taken) > 0 {
		if err := commit(ctx, engine.Step{Turn: turn, Delivered: in.Taken, Events: []event.Payload{engine.Receipt(turn, in.Taken, now)}}); err != nil {
			return engine.Outcome{}, true, err
		}
	}
	if len(in.Pauses) == 0 {
		return engine.Outcome{}, false, nil
	}
	reason := words.Or(strings.TrimSpace(in.Pauses[len(in.Pauses)-1].Text), "paused")
	if err := commit(ctx, engine.Step{Turn: turn, Delivered: in.Pauses, Events: []event.Payload{engine.Receipt(turn, in.Pauses, now)}}); err != nil {
		return engine.Outcome{}, true, err
	}
	return engine.Outcome{Status: engine.Paused, Reason: reason, Turn: turn}, true, nil
}

// Message is the text delivering injs: intro (when not ""), each
// injection rendered, their delivery marker.
func Message(intro string, injs []inject.Injection) string {
	var parts []string
	if intro != "" {
		parts = append(parts, intro)
	}
	for _, inj := range injs {
		parts = append(parts, engine.Render(inj))
	}
	if len(injs) > 0 {
		parts = append(parts, Marker(injs))
	}
	return strings.Join(parts, "\n\n")
}

// UserStep is the step storing text, a message to the CLI, as the user's;
// it delivers injs, in the next turn.
func UserStep(turn int, text string, injs []inject.Injection, now time.Time) engine.Step {
	step := engine.Step{Turn: turn, Messages: []llm.Message{llm.UserText(text)}, Delivered: injs}
	if len(injs) > 0 {
		step.Events = []event.Payload{engine.Receipt(turn+1, injs, now)}
	}
	return step
}

// Marker is the delivery marker of a message carrying injs: found in what
// the CLI stored of its session, it says the CLI took them. It holds no
// character a JSON encoder escapes, so it reads the same in a JSON file.
func Marker(injs []inject.Injection) string {
	ids := make([]string, len(injs))
	for i, inj := range injs {
		ids[i] = strconv.FormatInt(inj.ID, 10)
	}
	return "[neuraphage-delivery:" + strings.Join(ids, ",") + "]"
}

// Delivered reports whether stored, what the CLI stored of its session,
// holds a delivery marker naming injection id.
func Delivered(stored string, id int64) bool {
	want := strconv.FormatInt(id, 10)
	for rest := stored; ; {
		_, after, ok := strings.Cut(rest, "[neuraphage-delivery:")
		if !ok {
			return false
		}
		ids, tail, ok := strings.Cut(after, "]")
		if !ok {
			return false
		}
		if slices.Contains(strings.Split(ids, ","), want) {
			return true
		}
		rest = tail
	}
}

// AnswerStep is the step that applies the user's reply to a widening the
// task asked them about (the interactive strategy, with rec): the reply is
// the last message from the user waiting for the task, and the step makes
// or drops the widening of manifest m. It is nil when no widening is
// pending or no reply waits. The reply itself still reaches the agent at
// the next boundary.
func AnswerStep(ctx context.Context, h engine.Host, m *task.Manifest, rec *lifecycle.Recoverer, turn int) (*engine.Step, error) {
	if m == nil || m.Pending == nil || rec == nil {
		return nil, nil
	}
	inbox, err := h.Inbox(ctx)
	if err != nil {
		return nil, err
	}
	reply := ""
	for _, inj := range inbox {
		if inj.Kind == inject.Message && inj.Source == inject.FromUser {
			reply = strings.TrimSpace(inj.Text)
		}
	}
	if reply == "" {
		return nil, nil
	}
	widened, _, ev := lifecycle.Answer(*m, reply, rec.Policy)
	step := engine.Step{Turn: turn, Manifest: &widened}
	if ev != nil {
		step.Events = []event.Payload{ev}
	}
	return &step, nil
}

// Answer stores the AnswerStep, when there is one, with commit.
func Answer(ctx context.Context, h engine.Host, m *task.Manifest, rec *lifecycle.Recoverer, turn int, commit func(context.Context, engine.Step) error) error {
	step, err := AnswerStep(ctx, h, m, rec, turn)
	if err != nil || step == nil {
		return err
	}
	return commit(ctx, *step)
}
