package syncer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// briefing is who decided a new task's briefing: Brief queues those rows
// itself, dispatch leaves them alone.
const briefing = "brief"

// dispatch queues as many of a task's held messages as its rate limit and
// cooldown allow, the most urgent first, into its injection queue: they
// reach its model together at its next turn boundary; a blocking one
// interrupts the turn in flight. Held messages past their time to live
// are dropped; beyond the backlog cap, the least urgent are; so are those
// of a forgotten learning.
func (s *Syncer) dispatch(ctx context.Context, id task.ID, now time.Time) {
	m := s.members[id]
	if m == nil || m.held == 0 {
		return
	}
	held, err := s.o.Knowledge.SyncMessages(ctx, store.SyncQuery{TaskID: id, States: []store.SyncState{store.SyncHeld}})
	if err != nil {
		s.log.Warn("reading held sync messages", "task_id", id, "err", err)
		return
	}
	held = slices.DeleteFunc(held, func(h store.SyncMessage) bool { return h.DecidedBy == briefing })
	slices.SortStableFunc(held, func(a, b store.SyncMessage) int { return urgencyRank(a.Urgency) - urgencyRank(b.Urgency) })
	keep := held[:0]
	for _, h := range held {
		switch {
		case now.Sub(h.CreatedAt) > s.cfg.PendingTTL:
			s.drop(ctx, h, "stale", fmt.Sprintf("held longer than %s", s.cfg.PendingTTL))
		case len(keep) >= s.cfg.MaxPending:
			s.drop(ctx, h, "backlog-full", fmt.Sprintf("more than %d messages held for the task", s.cfg.MaxPending))
		default:
			keep = append(keep, h)
		}
	}
	m.held = len(keep)
	if len(keep) == 0 || !m.running {
		return
	}
	cut := now.Add(-time.Minute)
	m.sent = slices.DeleteFunc(m.sent, func(t time.Time) bool { return t.Before(cut) })
	budget := s.cfg.MaxPerMinute - len(m.sent)
	cooling := !m.lastSent.IsZero() && now.Sub(m.lastSent) < s.cfg.Cooldown
	n := 0
	for _, h := range keep {
		if budget <= 0 {
			break
		}
		if cooling && h.Urgency != Blocking {
			continue
		}
		if s.forgotten(ctx, h.LearningID) {
			s.drop(ctx, h, "forgotten", "the learning was forgotten (knowledge forget)")
			m.held--
			continue
		}
		if !s.queue(ctx, m, h, now) {
			continue
		}
		budget--
		n++
	}
	if n > 0 {
		m.lastSent = now
	}
}

// forgotten says whether a learning was removed from the store.
func (s *Syncer) forgotten(ctx context.Context, id int64) bool {
	_, err := s.o.Knowledge.GetLearning(ctx, id)
	return errors.Is(err, store.ErrNotFound)
}

// errNotHeld: a message changed state since it was read.
var errNotHeld = errors.New("the message is no longer held")

// queue puts one held message into the task's injection queue. The
// message is marked queued first, so that a failure after the injection
// (a store error, a crash) cannot send it twice: at most once, with the
// learning kept in the store whatever happens.
func (s *Syncer) queue(ctx context.Context, m *member, h store.SyncMessage, now time.Time) bool {
	at := now.UTC()
	if _, _, err := s.o.Knowledge.UpdateSyncMessage(ctx, h.ID, func(sm *store.SyncMessage) ([]event.Event, error) {
		if sm.State != store.SyncHeld {
			return nil, errNotHeld
		}
		sm.State, sm.QueuedAt = store.SyncQueued, &at
		return nil, nil
	}); err != nil {
		if !errors.Is(err, errNotHeld) {
			s.log.Warn("queueing a sync message", "task_id", h.TaskID, "err", err)
		}
		return false
	}
	inj, err := s.o.Actions.Inject(ctx, injection(h))
	if err != nil {
		s.log.Warn("queueing a sync message", "task_id", h.TaskID, "err", err)
		if _, _, err := s.o.Knowledge.UpdateSyncMessage(ctx, h.ID, func(sm *store.SyncMessage) ([]event.Event, error) {
			sm.State, sm.QueuedAt = store.SyncHeld, nil
			return nil, nil
		}); err != nil {
			s.log.Warn("holding a sync message again", "task_id", h.TaskID, "err", err)
		}
		return false
	}
	lat := s.latency[h.ID]
	delete(s.latency, h.ID)
	_, _, err = s.o.Knowledge.UpdateSyncMessage(ctx, h.ID, func(sm *store.SyncMessage) ([]event.Event, error) {
		sm.InjectionID = inj.ID
		return []event.Event{event.New(at, sm.TaskID, event.SyncMessageSent{MessageID: sm.ID, LearningID: sm.LearningID,
			From: string(sm.From), Urgency: sm.Urgency, Relevance: sm.Relevance, Score: sm.Score, Message: sm.Message,
			Reason: sm.Reason, DecidedBy: sm.DecidedBy, InjectionID: inj.ID, LatencyMs: lat})}, nil
	})
	if err != nil {
		s.log.Warn("recording a queued sync message", "task_id", h.TaskID, "err", err)
	}
	m.held--
	m.sent = append(m.sent, now)
	s.count(func(st *Stats) { st.Sent++ })
	return true
}

// injection renders a sync message for the executor's door.
func injection(h store.SyncMessage) inject.Injection {
	return inject.Injection{TaskID: h.TaskID, Kind: inject.Sync, Source: inject.FromSyncer, Urgency: inject.Urgency(h.Urgency),
		Attrs: map[string]string{"from": string(h.From), "learning": fmt.Sprint(h.LearningID)},
		Text:  h.Message, Urgent: h.Urgency == Blocking, Quiet: h.Urgency != Blocking}
}

// drop marks a held message ignored. Only the loop calls it.
func (s *Syncer) drop(ctx context.Context, h store.SyncMessage, reason, detail string) {
	delete(s.latency, h.ID)
	s.ignoreMessage(ctx, h, reason, detail)
}

// ignoreMessage records a message as ignored; it touches no loop state.
func (s *Syncer) ignoreMessage(ctx context.Context, h store.SyncMessage, reason, detail string) {
	_, _, err := s.o.Knowledge.UpdateSyncMessage(ctx, h.ID, func(sm *store.SyncMessage) ([]event.Event, error) {
		if sm.State != store.SyncHeld {
			return nil, errNotHeld
		}
		sm.State, sm.Note = store.SyncIgnored, reason+": "+detail
		return []event.Event{event.New(s.o.Now().UTC(), sm.From, event.SyncIgnored{LearningID: sm.LearningID, To: string(sm.TaskID),
			MessageID: sm.ID, Reason: reason, Detail: detail})}, nil
	})
	if err != nil {
		if !errors.Is(err, errNotHeld) {
			s.log.Warn("dropping a held sync message", "message", h.ID, "err", err)
		}
		return
	}
	s.count(func(st *Stats) { st.Ignored[reason]++ })
	s.o.Hooks.Notify(hooks.SyncerIgnored, h.From, &h)
}

// dropHeld drops every message held for a task.
func (s *Syncer) dropHeld(ctx context.Context, id task.ID, reason, detail string) {
	held, err := s.o.Knowledge.SyncMessages(ctx, store.SyncQuery{TaskID: id, States: []store.SyncState{store.SyncHeld}})
	if err != nil {
		return
	}
	for _, h := range held {
		s.drop(ctx, h, reason, detail)
	}
	if m := s.members[id]; m != nil {
		m.held = 0
	}
}

// heldOf counts a task's held messages in the store (its briefing's
// excepted): a task the Syncer starts tracking may have some from before
// a restart.
func (s *Syncer) heldOf(ctx context.Context, id task.ID) int {
	held, err := s.o.Knowledge.SyncMessages(ctx, store.SyncQuery{TaskID: id, States: []store.SyncState{store.SyncHeld}})
	if err != nil {
		s.log.Warn("reading held sync messages", "task_id", id, "err", err)
		return 0
	}
	return len(slices.DeleteFunc(held, func(h store.SyncMessage) bool { return h.DecidedBy == briefing }))
}

// ignore records that a learning was not relayed (to anyone, or to one
// task).
func (s *Syncer) ignore(ctx context.Context, source task.ID, p event.SyncIgnored) {
	if _, err := s.o.Store.AppendEvents(ctx, event.New(s.o.Now().UTC(), source, p)); err != nil {
		s.log.Warn("recording an ignored learning", "err", err)
	}
	s.count(func(st *Stats) { st.Ignored[p.Reason]++ })
	s.o.Hooks.Notify(hooks.SyncerIgnored, source, &p)
}

// onDelivered marks the sync messages among a receipt's injections
// delivered.
func (s *Syncer) onDelivered(ctx context.Context, e event.Event, p event.Delivered) {
	for i, id := range p.InjectionIDs {
		if i < len(p.Kinds) && p.Kinds[i] != string(inject.Sync) {
			continue
		}
		ms, err := s.o.Knowledge.SyncMessages(ctx, store.SyncQuery{InjectionID: id})
		if err != nil {
			continue
		}
		for _, m := range ms {
			if m.State != store.SyncQueued {
				continue
			}
			at := e.Time.UTC()
			dm, _, err := s.o.Knowledge.UpdateSyncMessage(ctx, m.ID, func(sm *store.SyncMessage) ([]event.Event, error) {
				sm.State, sm.DeliveredAt = store.SyncDelivered, &at
				return []event.Event{event.New(at, sm.TaskID, event.SyncDelivered{MessageID: sm.ID, LearningID: sm.LearningID,
					From: string(sm.From), Urgency: sm.Urgency, InjectionID: id, Turn: p.Turn,
					LatencyMs: at.Sub(sm.CreatedAt).Milliseconds()})}, nil
			})
			if err != nil {
				continue
			}
			s.count(func(st *Stats) { st.Delivered++ })
			s.o.Hooks.Notify(hooks.SyncerDelivered, dm.TaskID, &dm)
		}
	}
}

// sweep reconciles the held messages with the store (a restart, a task
// the Syncer does not track), dispatches those whose time came, and
// offers recent learnings to tasks that started running after they were
// evaluated.
func (s *Syncer) sweep(ctx context.Context, now time.Time) {
	s.count(func(st *Stats) { st.Sweeps++; st.LastSweep = now.UTC() })
	s.reconcile(ctx, now)
	for id, m := range s.members {
		if m.held > 0 {
			s.dispatch(ctx, id, now)
		}
	}
	keep := s.recentList[:0]
	for _, r := range s.recentList {
		if now.Sub(r.at) > s.cfg.PendingTTL {
			continue
		}
		keep = append(keep, r)
	}
	s.recentList = keep
	for _, r := range s.recentList {
		if now.Sub(r.evaluated) < s.cfg.Cooldown {
			continue
		}
		late := map[task.ID]bool{}
		for id, m := range s.members {
			if m.running && !r.offered[id] {
				late[id] = true
			}
		}
		if len(late) == 0 {
			continue
		}
		l, err := s.o.Knowledge.GetLearning(ctx, r.id)
		if err != nil {
			continue // forgotten
		}
		s.evaluate(ctx, l, now, late)
	}
}

// reconcile counts each tracked task's held messages from the store, and
// settles those of tasks it does not track: dropped when the task has
// finished (or is gone) or the message is past its time to live; kept for
// a task that is queued or paused, until it runs again.
func (s *Syncer) reconcile(ctx context.Context, now time.Time) {
	held, err := s.o.Knowledge.SyncMessages(ctx, store.SyncQuery{States: []store.SyncState{store.SyncHeld}})
	if err != nil {
		s.log.Warn("reading held sync messages", "err", err)
		return
	}
	counts := map[task.ID]int{}
	status := map[task.ID]task.Status{}
	for _, h := range held {
		if h.DecidedBy == briefing {
			if now.Sub(h.CreatedAt) > s.cfg.PendingTTL {
				s.drop(ctx, h, "brief-failed", "the briefing was never queued")
			}
			continue
		}
		if s.members[h.TaskID] != nil {
			counts[h.TaskID]++
			continue
		}
		st, ok := status[h.TaskID]
		if !ok {
			t, err := s.o.Store.GetTask(ctx, h.TaskID)
			switch {
			case errors.Is(err, store.ErrNotFound):
				st = task.Cancelled
			case err != nil:
				continue
			default:
				st = t.Status
			}
			status[h.TaskID] = st
		}
		switch {
		case st.Terminal():
			s.drop(ctx, h, "recipient-finished", "the task "+string(st))
		case now.Sub(h.CreatedAt) > s.cfg.PendingTTL:
			s.drop(ctx, h, "stale", fmt.Sprintf("held longer than %s", s.cfg.PendingTTL))
		}
	}
	for id, m := range s.members {
		m.held = counts[id]
	}
}
