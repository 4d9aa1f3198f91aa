package supervise

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/stuck"
	"github.com/neuraphage/neuraphage-go/internal/supervisor"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Snapshot is what tier 2 judges: the task's goal, its window and
// counters, what tier 1 found (if anything), the ladder so far and an
// excerpt of the conversation.
type Snapshot struct {
	Task     task.Task
	Counters stuck.Counters
	Window   []stuck.Step
	Finding  *stuck.Finding
	// Signal is a weak signal tier 1 does not act on alone (wandering
	// at its first count), for a look asked because of it; nil for a
	// periodic look and when Finding is set.
	Signal   *stuck.Finding
	Ladder   string
	Unheeded int
	Excerpt  string
}

// Verdict is the watcher persona's judgement, validated.
type Verdict struct {
	Status         string  `json:"status"`
	Confidence     float64 `json:"confidence"`
	Diagnosis      string  `json:"diagnosis"`
	Recommendation string  `json:"recommendation"`
	NudgeMessage   string  `json:"nudge_message,omitempty"`
}

// Judge is tier 2.
type Judge interface {
	Judge(ctx context.Context, s Snapshot) (Verdict, error)
}

var (
	statuses        = []string{"healthy", "struggling", "stuck", "runaway"}
	recommendations = []string{"continue", "nudge", "escalate", "pause", "abort"}
)

const (
	maxReply     = 8 << 10
	maxDiagnosis = 400
	maxNudge     = 1200
)

// ParseVerdict reads the watcher persona's reply: one JSON object, alone or
// in a ```json fence, with status, confidence (0 to 1), diagnosis,
// recommendation and nudge-message ("nudge_message" is accepted too).
// Anything else is an error saying what was wrong; a reply is never
// trusted further than that. A nudge recommendation needs a message.
func ParseVerdict(reply string) (Verdict, error) {
	if len(reply) > maxReply {
		return Verdict{}, fmt.Errorf("the reply is %d bytes; a verdict is under %d", len(reply), maxReply)
	}
	var raw struct {
		Status         *string  `json:"status"`
		Confidence     *float64 `json:"confidence"`
		Diagnosis      string   `json:"diagnosis"`
		Recommendation *string  `json:"recommendation"`
		Nudge          string   `json:"nudge-message"`
		Nudge2         string   `json:"nudge_message"`
	}
	if err := llm.DecodeObject(reply, &raw); err != nil {
		return Verdict{}, err
	}
	var v Verdict
	switch {
	case raw.Status == nil:
		return Verdict{}, errors.New("the reply has no status")
	case !slices.Contains(statuses, strings.ToLower(*raw.Status)):
		return Verdict{}, fmt.Errorf("status %q is not one of %s", words.Clip(*raw.Status, 20), strings.Join(statuses, ", "))
	case raw.Recommendation == nil:
		return Verdict{}, errors.New("the reply has no recommendation")
	case !slices.Contains(recommendations, strings.ToLower(*raw.Recommendation)):
		return Verdict{}, fmt.Errorf("recommendation %q is not one of %s", words.Clip(*raw.Recommendation, 20), strings.Join(recommendations, ", "))
	case raw.Confidence == nil:
		return Verdict{}, errors.New("the reply has no confidence")
	case !(*raw.Confidence >= 0 && *raw.Confidence <= 1):
		return Verdict{}, fmt.Errorf("confidence %g is not between 0 and 1", *raw.Confidence)
	}
	v.Status, v.Recommendation, v.Confidence = strings.ToLower(*raw.Status), strings.ToLower(*raw.Recommendation), *raw.Confidence
	v.Diagnosis = words.Clip(words.OneLine(raw.Diagnosis), maxDiagnosis)
	v.NudgeMessage = words.Clip(strings.TrimSpace(words.Or(raw.Nudge, raw.Nudge2)), maxNudge)
	if v.Recommendation == "nudge" && v.NudgeMessage == "" {
		return Verdict{}, errors.New("a nudge recommendation without a nudge-message")
	}
	return v, nil
}

// ModelJudge asks the watcher persona through a model client.
type ModelJudge struct {
	// Model returns the client and model name for the persona's tier.
	Model func() (llm.Client, string, error)
	// System is the watcher persona's system prompt.
	System  string
	Timeout time.Duration
	// Spent, when set, is told what each call cost.
	Spent func(id task.ID, u llm.Usage, usd float64)
}

// Judge implements Judge.
func (j ModelJudge) Judge(ctx context.Context, s Snapshot) (Verdict, error) {
	p := supervisor.Persona{Model: j.Model, System: j.System, Timeout: j.Timeout, MaxTokens: 500}
	if j.Spent != nil {
		p.Spent = func(u llm.Usage, usd float64) { j.Spent(s.Task.ID, u, usd) }
	}
	return supervisor.Ask(ctx, p, Prompt(s), ParseVerdict)
}

// Prompt renders a snapshot for the watcher persona. Every piece of text
// the task controls (its description and persona name, the steps of its
// window, the evidence and diagnosis that quote them, its conversation)
// goes in escaped, inside supervisor.Data elements, as the task's own
// model sees it: a forged wrapper or heading in it cannot pass for part
// of the question.
func Prompt(s Snapshot) string {
	var b bytes.Buffer
	b.WriteString(supervisor.DataNote + "\n")
	fmt.Fprintf(&b, "Task %s (persona %s):\n%s\n", supervisor.Escape(string(s.Task.ID)), supervisor.Inline("persona", words.Or(s.Task.Persona, "default")),
		supervisor.Data("description", words.Clip(s.Task.Description, 2000)))
	c := s.Counters
	fmt.Fprintf(&b, "\nSince it started or resumed: %d steps, %d tool calls (%d failed), %d file changes, %d turns.\n",
		c.Steps, c.Calls, c.Errors, c.FileChanges, c.Turns)
	fmt.Fprintf(&b, "Since its last progress: %d steps, %d tokens, $%.4f.\n", c.StepsSinceProgress, c.TokensSinceProgress, c.USDSinceProgress)
	if s.Ladder != "" && s.Ladder != "none" {
		fmt.Fprintf(&b, "It has been nudged (%s); %d nudges went unheeded.\n", supervisor.Escape(s.Ladder), s.Unheeded)
	}
	if f := s.Finding; f != nil {
		fmt.Fprintf(&b, "\nThe deterministic checks found: %s (%s): %s\nEvidence:\n", supervisor.Escape(string(f.Check)), supervisor.Escape(f.Status), supervisor.Inline("diagnosis", f.Diagnosis))
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "- step %d %s: %s\n", e.Step, supervisor.Escape(e.Kind), supervisor.Inline("evidence", e.What))
		}
	} else if sig := s.Signal; sig != nil {
		fmt.Fprintf(&b, "\nThe deterministic checks found nothing to act on; you are asked because of a weak signal: %s (%s): %s\nLast seen:\n",
			supervisor.Escape(string(sig.Check)), supervisor.Escape(sig.Status), supervisor.Inline("signal", sig.Diagnosis))
		for _, e := range sig.Evidence {
			fmt.Fprintf(&b, "- step %d %s: %s\n", e.Step, supervisor.Escape(e.Kind), supervisor.Inline("evidence", e.What))
		}
	} else {
		b.WriteString("\nThe deterministic checks found nothing; this is a periodic look at a long-running task.\n")
	}
	b.WriteString("\nRecent steps (oldest first; the epoch counts file changes):\n")
	for _, st := range s.Window {
		mark := ""
		if st.Error {
			mark = " [error]"
		}
		fmt.Fprintf(&b, "%d %s e%d%s: %s\n", st.N, supervisor.Escape(st.Kind), st.Epoch, mark, supervisor.Inline("step", st.What))
	}
	if s.Excerpt != "" {
		fmt.Fprintf(&b, "\nThe end of its conversation:\n%s\n", supervisor.Data("conversation", words.Clip(s.Excerpt, 4000)))
	}
	b.WriteString("\nJudge whether it is making progress toward its goal. Reply with the JSON object only.")
	return b.String()
}
