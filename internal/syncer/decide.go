package syncer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/knowledge"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/supervisor"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Decision is who hears a learning: the syncer persona's reply (seed 004's
// JSON), validated, or the rules' equivalent.
type Decision struct {
	Source     task.ID     `json:"learning-source"`
	Summary    string      `json:"learning-summary"`
	Recipients []Recipient `json:"recipients"`
	SkipReason string      `json:"skip-reason,omitempty"`
	// Dropped counts the reply's recipients left out as invalid.
	Dropped int `json:"-"`
}

// Recipient is one task that should hear a learning.
type Recipient struct {
	TaskID    task.ID `json:"task-id"`
	Relevance string  `json:"relevance"` // high | medium | low
	Urgency   string  `json:"urgency"`   // blocking | helpful | fyi
	Message   string  `json:"message"`
}

// Decider is the syncer persona.
type Decider interface {
	Decide(ctx context.Context, ev Evaluation) (Decision, error)
}

var relevances = []string{"high", "medium", "low"}

const maxDecisionReply = 16 << 10

// ParseDecision reads the syncer persona's reply: one JSON object, alone or
// in a ```json fence, with recipients (task-id, relevance, urgency,
// message) and a skip-reason when there are none. Recipients must be
// among the candidates (never the source, never a task not offered), with
// a known relevance and urgency and a message: an entry that is not is
// left out (counted in Dropped), and when no entry is usable the reply is
// an error saying what was wrong, and the caller falls back to the rules.
// A task named twice keeps its first entry.
func ParseDecision(reply string, candidates []Candidate, maxMessage int) (Decision, error) {
	if len(reply) > maxDecisionReply {
		return Decision{}, fmt.Errorf("the reply is %d bytes; a decision is under %d", len(reply), maxDecisionReply)
	}
	var raw struct {
		Source     string `json:"learning-source"`
		Summary    string `json:"learning-summary"`
		Recipients *[]struct {
			TaskID    string `json:"task-id"`
			TaskID2   string `json:"task_id"`
			Relevance string `json:"relevance"`
			Urgency   string `json:"urgency"`
			Message   string `json:"message"`
		} `json:"recipients"`
		Skip  string `json:"skip-reason"`
		Skip2 string `json:"skip_reason"`
	}
	if err := llm.DecodeObject(reply, &raw); err != nil {
		return Decision{}, err
	}
	if raw.Recipients == nil {
		return Decision{}, errors.New("the reply has no recipients list")
	}
	d := Decision{Source: task.ID(words.Clip(strings.TrimSpace(raw.Source), 40)), Summary: words.Clip(words.OneLine(raw.Summary), 300), SkipReason: words.Clip(words.OneLine(words.Or(raw.Skip, raw.Skip2)), 300)}
	seen := map[task.ID]bool{}
	var bad []error
	for i, r := range *raw.Recipients {
		id := task.ID(strings.TrimSpace(words.Or(r.TaskID, r.TaskID2)))
		rel, urg := strings.ToLower(strings.TrimSpace(r.Relevance)), strings.ToLower(strings.TrimSpace(r.Urgency))
		msg := strings.TrimSpace(r.Message)
		var err error
		switch {
		case !slices.ContainsFunc(candidates, func(c Candidate) bool { return c.TaskID == id }):
			err = fmt.Errorf("recipient %d: %q is not one of the candidate tasks", i+1, words.Clip(string(id), 20))
		case !slices.Contains(relevances, rel):
			err = fmt.Errorf("recipient %d: relevance %q is not high, medium or low", i+1, words.Clip(strings.TrimSpace(rel), 20))
		case urgencyRank(urg) >= len(urgencies):
			err = fmt.Errorf("recipient %d: urgency %q is not blocking, helpful or fyi", i+1, words.Clip(strings.TrimSpace(urg), 20))
		case msg == "":
			err = fmt.Errorf("recipient %d: the message is empty", i+1)
		}
		if err != nil {
			bad = append(bad, err)
			continue
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		d.Recipients = append(d.Recipients, Recipient{TaskID: id, Relevance: rel, Urgency: urg, Message: words.Clip(strings.TrimSpace(msg), maxMessage)})
	}
	if len(bad) > 0 && len(d.Recipients) == 0 {
		// Nothing usable: the rules decide instead.
		return Decision{}, errors.Join(bad...)
	}
	d.Dropped = len(bad)
	return d, nil
}

// rulesDecision is the deterministic decision: every candidate gets the
// learning at the urgency its kind and relevance suggest, if the
// thresholds allow that (else the next lower one they allow).
func rulesDecision(l store.Learning, ev Evaluation, maxMessage int) Decision {
	d := Decision{Source: ev.Source.TaskID, Summary: l.Summary}
	for _, c := range ev.Candidates {
		want := rulesUrgency(l, c)
		u := ""
		for _, x := range urgencies[urgencyRank(want):] {
			if slices.Contains(c.Allowed, x) {
				u = x
				break
			}
		}
		if u == "" {
			continue
		}
		rel := "low"
		switch {
		case c.Score >= 0.5:
			rel = "high"
		case c.Score >= 0.3:
			rel = "medium"
		}
		d.Recipients = append(d.Recipients, Recipient{TaskID: c.TaskID, Relevance: rel, Urgency: u, Message: RulesMessage(l, ev.Source, maxMessage)})
	}
	if len(d.Recipients) == 0 {
		d.SkipReason = "the thresholds allow none of the candidates this learning's urgency"
	}
	return d
}

// rulesUrgency: a resolved error is blocking for a task that touched the
// same files or directories (it is about to hit it), helpful otherwise; a recorded or
// model-found learning is helpful; a discovery or a statement is fyi,
// helpful when clearly relevant.
func rulesUrgency(l store.Learning, c Candidate) string {
	switch knowledge.Kind(l.Kind) {
	case knowledge.ErrorResolution:
		// Only a task working on the same files is about to hit it; to
		// others a fixed error is worth knowing, not an interruption.
		if slices.Contains(c.Relations, "same-files") {
			return Blocking
		}
		return Helpful
	case knowledge.Explicit, knowledge.Model:
		return Helpful
	default:
		if c.Score >= 0.5 {
			return Helpful
		}
		return FYI
	}
}

// RulesMessage is the rules' message: who found what, and the detail.
func RulesMessage(l store.Learning, src Candidate, maxMessage int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s (%q) found: %s", src.TaskID, words.Clip(strings.TrimSpace(src.Description), 80), words.OneLine(l.Summary))
	if d := words.OneLine(l.Detail); d != "" {
		fmt.Fprintf(&b, "\n%s", d)
	}
	if len(l.Files) > 0 {
		fmt.Fprintf(&b, "\nFiles: %s", strings.Join(l.Files, ", "))
	}
	return words.Clip(strings.TrimSpace(b.String()), maxMessage)
}

// ModelDecider asks the syncer persona through a model client.
type ModelDecider struct {
	// Model returns the client and model name for the persona's tier.
	Model func() (llm.Client, string, error)
	// System is the syncer persona's system prompt.
	System     string
	Timeout    time.Duration
	MaxMessage int
	// Spent, when set, is told what each call cost.
	Spent func(u llm.Usage, usd float64)
}

// Decide implements Decider.
func (d ModelDecider) Decide(ctx context.Context, ev Evaluation) (Decision, error) {
	p := supervisor.Persona{Model: d.Model, System: d.System, Timeout: d.Timeout, MaxTokens: 800, Spent: d.Spent}
	return supervisor.Ask(ctx, p, Prompt(ev), func(reply string) (Decision, error) {
		return ParseDecision(reply, ev.Candidates, max(d.MaxMessage, 100))
	})
}

// Prompt renders an evaluation for the syncer persona. Every piece of
// text a task controls (descriptions, the learning's summary, detail,
// tags and files, a candidate's tags and focus) goes in escaped, inside
// supervisor.Data elements, as a task's own model sees it: a forged
// wrapper or line in it cannot pass for part of the question.
func Prompt(ev Evaluation) string {
	var b bytes.Buffer
	l := ev.Learning
	b.WriteString(supervisor.DataNote + "\n")
	fmt.Fprintf(&b, "New learning #%d (%s) from task %s: %s\n", l.ID, supervisor.Escape(l.Kind), supervisor.Escape(string(ev.Source.TaskID)), supervisor.Inline("description", ev.Source.Description))
	fmt.Fprintf(&b, "Summary: %s\n", supervisor.Inline("summary", l.Summary))
	if l.Detail != "" {
		fmt.Fprintf(&b, "Detail:\n%s\n", supervisor.Data("detail", l.Detail))
	}
	if len(l.Tags) > 0 {
		fmt.Fprintf(&b, "Tags: %s\n", supervisor.Inline("tags", strings.Join(l.Tags, ", ")))
	}
	if len(l.Files) > 0 {
		fmt.Fprintf(&b, "Files: %s\n", supervisor.Inline("files", strings.Join(l.Files, ", ")))
	}
	b.WriteString("\nOther running tasks that may need it (relevance score 0-1; the urgencies the thresholds allow):\n")
	for _, c := range ev.Candidates {
		fmt.Fprintf(&b, "- task %s: %s", supervisor.Escape(string(c.TaskID)), supervisor.Inline("description", c.Description))
		if len(c.Tags) > 0 {
			fmt.Fprintf(&b, " [tags: %s]", supervisor.Inline("tags", strings.Join(c.Tags, ", ")))
		}
		if c.Focus != "" {
			fmt.Fprintf(&b, " [now: %s]", supervisor.Inline("focus", c.Focus))
		}
		rel := "none"
		if len(c.Relations) > 0 {
			rel = strings.Join(c.Relations, ", ")
		}
		fmt.Fprintf(&b, " [related: %s; score %.2f; allowed: %s]\n", supervisor.Escape(words.OneLine(rel)), c.Score, supervisor.Escape(words.OneLine(strings.Join(c.Allowed, ", "))))
	}
	b.WriteString("\nUse the task ids exactly as given. Reply with the JSON object only.")
	return b.String()
}

// ModelExtractor is the optional turn-end model pass: a turn's digest in,
// zero or more learnings out.
type ModelExtractor interface {
	Extract(ctx context.Context, id task.ID, digest string) ([]knowledge.Candidate, error)
}

// ModelPass asks the router tier for the learnings of a turn.
type ModelPass struct {
	Model   func() (llm.Client, string, error)
	Timeout time.Duration
	Spent   func(u llm.Usage, usd float64)
}

// Extract implements ModelExtractor.
func (p ModelPass) Extract(ctx context.Context, id task.ID, digest string) ([]knowledge.Candidate, error) {
	q := supervisor.Persona{Model: p.Model, System: knowledge.ModelPrompt, Timeout: p.Timeout, MaxTokens: 800, Spent: p.Spent}
	return supervisor.Ask(ctx, q, ModelPassPrompt(id, digest), knowledge.ParseModelLearnings)
}

// ModelPassPrompt is the question of the turn-end model pass: the turn's
// digest, which is all task text (what it said, called and got back),
// escaped inside a supervisor.Data element.
func ModelPassPrompt(id task.ID, digest string) string {
	return supervisor.DataNote + "\nTask " + supervisor.Escape(string(id)) + "'s last turn:\n" + supervisor.Data("turn", digest)
}

// extractTurn runs the turn-end model pass on a task's last turn. The
// task's tags are taken now: the reply may come after it finished.
func (s *Syncer) extractTurn(ctx context.Context, id task.ID, turn int) {
	digest := s.x.TurnDigest(string(id))
	if strings.TrimSpace(digest) == "" {
		return
	}
	var tags []string
	if m := s.members[id]; m != nil {
		tags = m.t.Tags
	}
	s.inflight[id] = true
	observed := s.o.Now()
	s.count(func(st *Stats) { st.ExtractCalls++ })
	s.rt.Go(ctx, func(ctx context.Context) func(context.Context) {
		cs, err := s.o.Extractor.Extract(ctx, id, digest)
		return func(ctx context.Context) {
			delete(s.inflight, id)
			if err != nil {
				s.log.Warn("the turn-end learning pass failed", "task_id", id, "err", err)
				s.count(func(st *Stats) { st.ExtractFailures++ })
				return
			}
			for _, c := range cs {
				c.Turn = turn
				for _, t := range tags {
					if !strings.HasPrefix(t, "group:") && !slices.Contains(c.Tags, t) {
						c.Tags = append(c.Tags, t)
					}
				}
				l, err := s.store(ctx, id, c)
				if err != nil {
					s.log.Warn("storing a learning", "task_id", id, "err", err)
					continue
				}
				s.count(func(st *Stats) {
					st.Learnings[string(c.Kind)]++
					if l.Merged {
						st.Merged++
					}
				})
				s.evaluate(ctx, l, observed, nil)
			}
		}
	})
}

// Spent adds a model call's cost to the Syncer's counters.
func (s *Syncer) Spent(u llm.Usage, usd float64) {
	s.count(func(st *Stats) {
		st.ModelTokens += u.InputTokens + u.OutputTokens
		st.ModelUSD += usd
	})
}
