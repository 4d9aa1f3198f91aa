package syncer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Brief gives a task that starts for the first time the learnings most
// relevant to its description and tags: one sync message (from
// "knowledge", fyi) queued before its first turn, so that it is in its
// first context. Each learning is recorded as sent to the task, so the
// Syncer does not relay it again. It is called by the executor, before the
// task's engine runs, on the executor's goroutine: it touches none of the
// loop's state. It does nothing when briefing is off, the Syncer is
// disabled, or nothing is relevant enough.
func (s *Syncer) Brief(ctx context.Context, t task.Task) {
	if !s.cfg.Enabled || s.cfg.Brief <= 0 || t.NoSupervision {
		return
	}
	ls, err := s.o.Knowledge.Learnings(ctx, store.LearningQuery{Search: t.Description + " " + strings.Join(t.Tags, " "), Limit: 5 * s.cfg.Brief})
	if err != nil {
		s.log.Warn("searching the knowledge store for a new task", "task_id", t.ID, "err", err)
		return
	}
	type scored struct {
		l     store.Learning
		score float64
	}
	var picks []scored
	for _, l := range ls {
		if slices.ContainsFunc(l.Sources, func(src store.LearningSource) bool { return src.TaskID == t.ID }) {
			continue
		}
		if sc := Score(l, t, "", nil, false); sc >= max(s.cfg.MinRelevance, briefMin) {
			picks = append(picks, scored{l, sc})
		}
	}
	slices.SortStableFunc(picks, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	if len(picks) > s.cfg.Brief {
		picks = picks[:s.cfg.Brief]
	}
	if len(picks) == 0 {
		return
	}
	now := s.o.Now().UTC()
	var (
		msgs []store.SyncMessage
		b    strings.Builder
	)
	b.WriteString("Other tasks in this repository found out, before you started:")
	for _, p := range picks {
		// Stored first: a learning relayed to the task since it started
		// running is refused here, and left out of the briefing.
		m, _, err := s.o.Knowledge.AddSyncMessage(ctx, store.SyncMessage{LearningID: p.l.ID, From: p.l.TaskID, TaskID: t.ID, Urgency: FYI,
			Score: round2(p.score), Message: words.OneLine(p.l.Summary), Reason: fmt.Sprintf("a new task's briefing; score %.2f", p.score),
			DecidedBy: "brief", State: store.SyncHeld, CreatedAt: now}, nil)
		if err != nil {
			if !errors.Is(err, store.ErrExists) {
				s.log.Warn("recording a briefing", "task_id", t.ID, "err", err)
			}
			continue
		}
		msgs = append(msgs, m)
		fmt.Fprintf(&b, "\n- %s (learning #%d, from %s)", words.OneLine(p.l.Summary), p.l.ID, p.l.TaskID)
		if d := words.OneLine(p.l.Detail); d != "" {
			fmt.Fprintf(&b, ": %s", words.Clip(d, 200))
		}
	}
	if len(msgs) == 0 {
		return
	}
	inj, err := s.o.Actions.Inject(ctx, inject.Injection{TaskID: t.ID, Kind: inject.Sync, Source: inject.FromSyncer, Urgency: inject.FYI,
		Attrs: map[string]string{"from": "knowledge"}, Text: words.Clip(strings.TrimSpace(b.String()), executor.MaxInjectionLen-len(words.Ellipsis)), Quiet: true})
	if err != nil {
		s.log.Warn("briefing a new task", "task_id", t.ID, "err", err)
		for _, m := range msgs {
			s.ignoreMessage(ctx, m, "brief-failed", err.Error())
		}
		return
	}
	for _, m := range msgs {
		_, _, err := s.o.Knowledge.UpdateSyncMessage(ctx, m.ID, func(sm *store.SyncMessage) ([]event.Event, error) {
			sm.State, sm.InjectionID, sm.QueuedAt = store.SyncQueued, inj.ID, &now
			return []event.Event{event.New(now, t.ID, event.SyncMessageSent{MessageID: sm.ID, LearningID: sm.LearningID,
				From: string(sm.From), Urgency: FYI, Score: sm.Score, Message: sm.Message, Reason: sm.Reason,
				DecidedBy: "brief", InjectionID: inj.ID})}, nil
		})
		if err != nil {
			s.log.Warn("recording a briefing", "task_id", t.ID, "err", err)
		}
	}
	s.count(func(st *Stats) { st.Briefed++; st.Sent += uint64(len(msgs)) })
}

// briefMin is the least relevance a learning needs to brief a new task:
// with no focus or files yet, only its description and tags speak.
const briefMin = 0.2
