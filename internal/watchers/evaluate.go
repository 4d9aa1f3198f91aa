package watchers

import (
	"context"
	"errors"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/interject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/limit"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// job is one evaluation: a session's look at one task's activity.
type job struct {
	ws           store.WatchSession
	task         task.ID
	desc         string
	activity     string
	observations int
	// breakpoint is when the activity became due.
	breakpoint time.Time
}

// outcome is what an evaluation hands back to the loop.
type outcome struct {
	session     string
	task        task.ID
	costUSD     float64
	injectionID int64
}

// maxShown bounds the content and notes events carry.
const maxShown = 2000

// evaluate asks the session's model about the activity, sends an
// interjection through the door when it says so, and records the
// evaluation (charged to the session). It runs in a job the runtime owns.
func (s *Service) evaluate(ctx context.Context, j job) outcome {
	began := time.Now()
	out := outcome{session: j.ws.ID, task: j.task}
	e := store.WatchEvaluation{SessionID: j.ws.ID, TaskID: j.task, Observations: j.observations}
	prompt := interject.Prompt(interject.PromptInput{Name: j.ws.Title, Authority: interject.Authority(j.ws.Authority), Brief: j.ws.Brief,
		Parent: string(j.task), Task: j.desc, Activity: j.activity})
	resp, err := s.ask(ctx, llm.Tier(j.ws.Tier), prompt)
	modelDone := time.Now()
	e.DurationMs = modelDone.Sub(began).Milliseconds()
	if resp != nil {
		e.Provider, e.Model, e.CostUSD = resp.Provider, resp.Model, resp.CostUSD
		e.InputTokens, e.OutputTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens
	}
	var (
		evs   []event.Event
		reply interject.Reply
	)
	switch {
	case err != nil:
		e.Decision, e.Error = store.DecisionFailed, words.Clip(err.Error(), 300)
		s.count(func(st *Stats) { st.Failures++ })
		s.log.Warn("a watcher session's evaluation failed", "session", j.ws.Name, "task_id", j.task, "err", err)
	default:
		reply = interject.Parse(resp.Message.Text())
		if reply.Decision == interject.Continue {
			e.Decision, e.Note = store.DecisionContinue, reply.Note
			break
		}
		e.Decision, e.Urgent, e.Content = store.DecisionInterject, reply.Urgent, reply.Content
		inj, err := s.interject(ctx, j, reply)
		switch {
		case err == nil:
			e.InjectionID, out.injectionID = inj.ID, inj.ID
		case isFinished(err):
			e.Undelivered = "task finished: " + err.Error()
			s.log.Info("a watcher session's interjection found its task finished; nothing sent", "session", j.ws.Name, "task_id", j.task)
		default:
			e.Undelivered = words.Clip(err.Error(), 300)
			s.log.Warn("sending a watcher session's interjection", "session", j.ws.Name, "task_id", j.task, "err", err)
		}
	}
	e.At = time.Now().UTC()
	// The latency of the machinery alone: breakpoint to the evaluation's
	// start, and the model's reply to the interjection in the queue.
	latency := began.Sub(j.breakpoint) + time.Since(modelDone)
	rec, _, err := s.o.Sessions.RecordEvaluation(ctx, e, func(r store.WatchEvaluation) []event.Event {
		evs = append(evs, event.New(r.At, r.TaskID, event.WatchEvaluation{Session: r.SessionID, Name: j.ws.Name, EvaluationID: r.ID,
			Decision: r.Decision, Observations: r.Observations, CostUSD: r.CostUSD, DurationMs: r.DurationMs, Error: r.Error}))
		switch r.Decision {
		case store.DecisionInterject:
			evs = append(evs, event.New(r.At, r.TaskID, event.WatchInterjected{Session: r.SessionID, Name: j.ws.Name, Authority: j.ws.Authority,
				Urgent: r.Urgent, Content: words.Clip(r.Content, maxShown), InjectionID: r.InjectionID, Undelivered: r.Undelivered,
				LatencyMs: latency.Milliseconds()}))
		case store.DecisionContinue:
			evs = append(evs, event.New(r.At, r.TaskID, event.WatchContinued{Session: r.SessionID, Name: j.ws.Name, Note: words.Clip(r.Note, maxShown)}))
		}
		return evs
	})
	if err != nil && ctx.Err() == nil {
		s.log.Warn("recording a watcher session's evaluation", "session", j.ws.Name, "err", err)
	}
	out.costUSD = rec.CostUSD
	if err != nil {
		out.costUSD = e.CostUSD
	}
	s.count(func(st *Stats) {
		st.Evaluations++
		if out.injectionID != 0 {
			st.Interjections++
			if reply.Urgent {
				st.Urgent++
			}
		}
	})
	return out
}

// ask asks the session's model one question.
func (s *Service) ask(ctx context.Context, tier llm.Tier, prompt string) (*llm.Response, error) {
	if s.o.Models == nil {
		return nil, errors.New("no model is configured for watcher sessions")
	}
	c, model, err := s.o.Models(tier)
	if err != nil {
		return nil, err
	}
	// The call shares the provider's limiter with the tasks' own calls and
	// stands back while one of theirs waits.
	return llm.Ask(limit.LowPriority(ctx), c, model, interject.System, prompt, s.o.Config.MaxTokens, s.o.Config.Timeout)
}

// interject sends the reply through the one door: urgent interrupts the
// turn in flight, the rest waits for the task's next boundary.
func (s *Service) interject(ctx context.Context, j job, r interject.Reply) (inject.Injection, error) {
	t, err := s.o.Store.GetTask(ctx, j.task)
	if err != nil {
		return inject.Injection{}, err
	}
	if t.Status.Terminal() || t.Closing {
		return inject.Injection{}, &task.FinishedError{ID: t.ID, Status: t.Status, Closing: t.Closing}
	}
	return s.o.Actions.Inject(ctx, inject.NewInterjection(j.task, j.ws.ID, j.ws.Title, j.ws.Authority, r.Content, r.Urgent))
}

func isFinished(err error) bool {
	var fe *task.FinishedError
	return errors.As(err, &fe)
}

// evaluated returns what the loop does with an outcome: the session may
// evaluate again, its spending is checked against its budget, and an
// interjection is remembered for its receipt.
func (l *loop) evaluated(o outcome) func(context.Context) {
	return func(ctx context.Context) {
		ss := l.sessions[o.session]
		if ss == nil {
			return
		}
		ss.inflight = false
		ss.ws.SpentUSD += o.costUSD
		if b := ss.ws.BudgetUSD; b > 0 && ss.ws.SpentUSD >= b && ss.ws.Status == store.WatchActive {
			ws, err := l.s.update(ctx, ss.ws.ID, "paused", func(ws *store.WatchSession) error {
				if ws.Status != store.WatchActive {
					return errAlready
				}
				ws.Status, ws.Reason = store.WatchPaused, "budget reached"
				return nil
			})
			if err == nil {
				ss.ws = ws
				ss.watches, ss.queue = map[task.ID]*watch{}, nil
			} else if !errors.Is(err, errAlready) {
				l.s.log.Warn("pausing a watcher session at its budget", "session", ss.ws.Name, "err", err)
			}
			return
		}
		l.start(ss, time.Now())
	}
}
