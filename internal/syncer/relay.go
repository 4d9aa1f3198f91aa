package syncer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/knowledge"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/supervisor"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// learned stores a candidate learning (unless the agent's record_learning
// call already did) and evaluates it for relay.
func (s *Syncer) learned(ctx context.Context, e event.Event, c knowledge.Candidate) {
	observed := e.Time
	if observed.IsZero() {
		observed = s.o.Now()
	}
	var (
		l   store.Learning
		err error
	)
	if c.Kind == knowledge.Explicit {
		p, ok := e.Payload.(event.Learning)
		if !ok {
			return
		}
		if l, err = s.o.Knowledge.GetLearning(ctx, p.LearningID); err != nil {
			s.log.Warn("reading a recorded learning", "learning", p.LearningID, "err", err)
			return
		}
		// The executor stored it; it joined a known learning when this
		// task is a later source.
		l.Merged = len(l.Sources) > 1 && l.Sources[0].TaskID != e.TaskID
	} else {
		l, err = s.store(ctx, e.TaskID, c)
		if err != nil {
			s.log.Warn("storing a learning", "task_id", e.TaskID, "err", err)
			return
		}
		if l.Repeat {
			return // the task said it before: evaluated then
		}
	}
	s.count(func(st *Stats) {
		st.Learnings[string(c.Kind)]++
		if l.Merged {
			st.Merged++
		}
	})
	s.evaluate(ctx, l, observed, nil)
}

// store records an extracted learning with its LearningExtracted event.
// It carries its source's topic tags too: what a task working on auth
// finds out is about auth.
func (s *Syncer) store(ctx context.Context, id task.ID, c knowledge.Candidate) (store.Learning, error) {
	if m := s.members[id]; m != nil {
		for _, t := range m.t.Tags {
			if !strings.HasPrefix(t, "group:") && !slices.Contains(c.Tags, t) {
				c.Tags = append(c.Tags, t)
			}
		}
	}
	l, _, err := s.o.Knowledge.RecordLearning(ctx, store.Learning{TaskID: id, Kind: string(c.Kind), Summary: c.Summary,
		Detail: c.Detail, Tags: c.Tags, Files: c.Files, CreatedAt: s.o.Now().UTC(), Turn: c.Turn, Similarity: s.cfg.Similarity},
		func(l store.Learning) []event.Event {
			return []event.Event{event.New(l.UpdatedAt, id, event.LearningExtracted{LearningID: l.ID, Kind: string(c.Kind),
				Summary: l.Summary, Tags: l.Tags, Files: l.Files, Merged: l.Merged, Sources: len(l.Sources), Turn: c.Turn})}
		})
	return l, err
}

// Candidate is one running task that might hear a learning, with why.
type Candidate struct {
	TaskID      task.ID  `json:"task_id"`
	Description string   `json:"description"`
	Tags        []string `json:"tags,omitempty"`
	Focus       string   `json:"focus,omitempty"`
	// Relations are the configured relationships that hold with the
	// learning's source: same-parent, shared-tags, same-files, same-group.
	Relations []string `json:"relations,omitempty"`
	Score     float64  `json:"score"`
	// Allowed are the urgencies the thresholds let it receive.
	Allowed []string `json:"allowed"`
}

func (c Candidate) related() bool { return len(c.Relations) > 0 }

// Evaluation is the SyncerEvaluate hook's decision: the learning and the
// candidates that may hear it (a hook may drop some, or lower scores).
type Evaluation struct {
	Learning   LearningView `json:"learning"`
	Source     Candidate    `json:"source"`
	Candidates []Candidate  `json:"candidates"`
}

// LearningView is a learning as the persona and hooks see it.
type LearningView struct {
	ID      int64    `json:"id"`
	Kind    string   `json:"kind"`
	Summary string   `json:"summary"`
	Detail  string   `json:"detail,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	Files   []string `json:"files,omitempty"`
	Sources []string `json:"sources"`
}

// evaluate decides who hears learning l (only among only, when set: the
// sweep's late joiners) and sends it.
func (s *Syncer) evaluate(ctx context.Context, l store.Learning, observed time.Time, only map[task.ID]bool) {
	s.count(func(st *Stats) { st.Evaluated++ })
	s.remember(l.ID, observed)
	srcID := l.TaskID
	if n := len(l.Sources); n > 0 {
		srcID = l.Sources[n-1].TaskID // the newest source is the one that just found it
	}
	src := s.members[srcID]
	if src == nil {
		t, err := s.o.Store.GetTask(ctx, srcID)
		if err != nil {
			return
		}
		src = newMember(t)
	}
	sent, err := s.o.Knowledge.SyncMessages(ctx, store.SyncQuery{LearningID: l.ID})
	if err != nil {
		s.log.Warn("reading a learning's sync messages", "learning", l.ID, "err", err)
		return
	}
	skip := map[task.ID]bool{}
	for _, src := range l.Sources {
		skip[src.TaskID] = true
	}
	skip[srcID] = true
	for _, m := range sent {
		skip[m.TaskID] = true
	}
	ev := Evaluation{Learning: view(l), Source: Candidate{TaskID: src.t.ID, Description: words.Clip(strings.TrimSpace(src.t.Description), 300), Tags: src.t.Tags}}
	r := s.recent(l.ID)
	a := newAbout(l, src)
	for id, m := range s.members {
		if r != nil && m.running {
			r.offered[id] = true // considered now: not a late joiner at a later sweep
		}
		if skip[id] || !m.running || m.t.NoSupervision || (only != nil && !only[id]) {
			continue
		}
		c := s.candidateOf(a, m)
		if len(c.Allowed) == 0 {
			continue
		}
		ev.Candidates = append(ev.Candidates, c)
	}
	slices.SortFunc(ev.Candidates, func(a, b Candidate) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(string(a.TaskID), string(b.TaskID))
	})
	if len(ev.Candidates) == 0 {
		if only == nil {
			s.ignore(ctx, srcID, event.SyncIgnored{LearningID: l.ID, Reason: "no-candidates",
				Detail: "no other running task is related or relevant enough"})
		}
		return
	}
	if len(ev.Candidates) > maxCandidates {
		ev.Candidates = ev.Candidates[:maxCandidates]
	}
	if s.o.Hooks.Has(hooks.SyncerEvaluate) {
		orig := slices.Clone(ev.Candidates)
		if v := s.o.Hooks.Decide(ctx, hooks.SyncerEvaluate, srcID, &ev, nil); v.Modified {
			ev.Candidates = kept(orig, ev.Candidates)
		}
		ev.Learning, ev.Source = view(l), Candidate{TaskID: src.t.ID, Description: words.Clip(strings.TrimSpace(src.t.Description), 300), Tags: src.t.Tags}
		if len(ev.Candidates) == 0 {
			s.ignore(ctx, srcID, event.SyncIgnored{LearningID: l.ID, Reason: "hook-dropped", Detail: "a SyncerEvaluate hook left no candidates"})
			return
		}
	}
	if s.o.Decider == nil {
		s.relay(ctx, l, observed, ev, rulesDecision(l, ev, s.cfg.MaxMessage), "rules")
		return
	}
	s.count(func(st *Stats) { st.PersonaCalls++ })
	s.rt.Go(ctx, func(ctx context.Context) func(context.Context) {
		// At most maxDecisions persona calls at once; the others wait
		// their turn (a sweep may evaluate many learnings together).
		select {
		case s.decisions <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		d, err := s.o.Decider.Decide(ctx, ev)
		<-s.decisions
		return func(ctx context.Context) {
			by := "persona"
			d, err := supervisor.Fallback(s.deg, d, err, func() Decision { return rulesDecision(l, ev, s.cfg.MaxMessage) })
			if err != nil {
				s.log.Warn("the syncer persona failed; the rules decide", "err", err)
				by = "rules"
			}
			s.relay(ctx, l, observed, ev, d, by)
		}
	})
}

// maxDecisions bounds the syncer persona's calls in flight.
const maxDecisions = 4

// maxCandidates bounds the candidates put before the persona.
const maxCandidates = 20

// kept returns the original candidates a hook left in the list: a hook
// may drop candidates, not add them or change what they are allowed.
func kept(orig, left []Candidate) []Candidate {
	var out []Candidate
	for _, c := range orig {
		if slices.ContainsFunc(left, func(l Candidate) bool { return l.TaskID == c.TaskID }) {
			out = append(out, c)
		}
	}
	return out
}

// candidate scores m for learning l from src, and says which urgencies
// the thresholds allow it.
func (s *Syncer) candidate(l store.Learning, src, m *member) Candidate {
	return s.candidateOf(newAbout(l, src), m)
}

// about is what scoring needs of a learning and its source, computed once
// per evaluation rather than once per candidate.
type about struct {
	l        store.Learning
	src      *member
	terms    []string        // the learning's content terms
	files    map[string]bool // the files it names
	srcFiles map[string]bool // those and the source's changed files
}

func newAbout(l store.Learning, src *member) *about {
	return &about{l: l, src: src, terms: learningTerms(l), files: fileSet(l.Files, nil), srcFiles: fileSet(l.Files, src.files)}
}

func (s *Syncer) candidateOf(a *about, m *member) Candidate {
	src := a.src
	c := Candidate{TaskID: m.t.ID, Description: words.Clip(strings.TrimSpace(m.t.Description), 300), Tags: m.t.Tags, Focus: m.focus}
	if s.cfg.SameParent && src.t.ParentID != "" && src.t.ParentID == m.t.ParentID {
		c.Relations = append(c.Relations, "same-parent")
	}
	if s.cfg.SharedTags && len(sharedTags(src.t.Tags, m.t.Tags)) > 0 {
		c.Relations = append(c.Relations, "shared-tags")
	}
	if s.cfg.SameFiles && overlap(a.srcFiles, m.files) {
		c.Relations = append(c.Relations, "same-files")
	}
	if s.cfg.SameGroup && sameGroup(src.t.Tags, m.t.Tags) {
		c.Relations = append(c.Relations, "same-group")
	}
	if m.terms == nil {
		m.terms = taskTerms(m.t, m.focus, m.files)
	}
	c.Score = score(a.l, a.terms, a.files, m.t, m.terms, m.files, c.related())
	sameParent := slices.Contains(c.Relations, "same-parent")
	for _, u := range urgencies {
		if c.Score < s.cfg.MinRelevance {
			break
		}
		switch s.cfg.Relay[u] {
		case Always:
			c.Allowed = append(c.Allowed, u)
		case Related:
			if c.related() {
				c.Allowed = append(c.Allowed, u)
			}
		case SameParent:
			if sameParent {
				c.Allowed = append(c.Allowed, u)
			}
		}
	}
	return c
}

// genericTags say how a learning was found, not what it is about.
var genericTags = []string{"error", "location", "statement", "learning"}

func sharedTags(a, b []string) []string {
	var out []string
	for _, t := range a {
		if strings.HasPrefix(t, "group:") || slices.Contains(genericTags, t) {
			continue
		}
		if slices.Contains(b, t) {
			out = append(out, t)
		}
	}
	return out
}

func sameGroup(a, b []string) bool {
	for _, t := range a {
		if strings.HasPrefix(t, "group:") && slices.Contains(b, t) {
			return true
		}
	}
	return false
}

// fileSet is a learning's files and its source's.
func fileSet(files []string, touched map[string]bool) map[string]bool {
	out := make(map[string]bool, len(files)+len(touched))
	for _, f := range files {
		out[f] = true
	}
	for f := range touched {
		out[f] = true
	}
	return out
}

// overlap says whether two sets of paths share a file or a directory
// (other than the root).
func overlap(a, b map[string]bool) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	dirs := map[string]bool{}
	for f := range a {
		if b[f] {
			return true
		}
		if d := path.Dir(f); d != "." && d != "/" {
			dirs[d] = true
		}
	}
	for f := range b {
		if dirs[path.Dir(f)] {
			return true
		}
	}
	return false
}

// Score is the deterministic relevance (0 to 1) of learning l to task t,
// whose current focus and changed files are given: the share of the
// learning's terms the task's description, tags, focus and files mention
// (up to 0.5), a shared topic tag (0.2), a shared file (0.3) or directory
// (0.15), and a relationship (0.1).
func Score(l store.Learning, t task.Task, focus string, files map[string]bool, related bool) float64 {
	return score(l, learningTerms(l), fileSet(l.Files, nil), t, taskTerms(t, focus, files), files, related)
}

// learningTerms are the content terms of a learning's text, tags and files.
func learningTerms(l store.Learning) []string {
	return knowledge.Terms(strings.Join([]string{l.Summary, l.Detail, strings.Join(l.Tags, " "), strings.Join(l.Files, " ")}, " "))
}

// taskTerms are the content terms of a task's description, tags, focus
// and changed files.
func taskTerms(t task.Task, focus string, files map[string]bool) []string {
	var b strings.Builder
	b.WriteString(t.Description)
	b.WriteString(" ")
	b.WriteString(strings.Join(t.Tags, " "))
	b.WriteString(" ")
	b.WriteString(focus)
	for f := range files {
		b.WriteString(" ")
		b.WriteString(f)
	}
	return knowledge.Terms(b.String())
}

// score is Score with the terms and file sets computed.
func score(l store.Learning, lt []string, lf map[string]bool, t task.Task, ct []string, files map[string]bool, related bool) float64 {
	score := 0.0
	if len(lt) > 0 {
		n := 0
		for _, w := range lt {
			if _, ok := slices.BinarySearch(ct, w); ok {
				n++
			}
		}
		score += 0.5 * min(1, float64(n)/float64(min(len(lt), 6)))
	}
	if len(sharedTags(l.Tags, t.Tags)) > 0 {
		score += 0.2
	}
	switch {
	case sharesFile(lf, files):
		score += 0.3
	case overlap(lf, files):
		score += 0.15
	}
	if related {
		score += 0.1
	}
	return min(score, 1)
}

func sharesFile(a, b map[string]bool) bool {
	for f := range a {
		if b[f] {
			return true
		}
	}
	return false
}

func view(l store.Learning) LearningView {
	v := LearningView{ID: l.ID, Kind: l.Kind, Summary: l.Summary, Detail: words.Clip(strings.TrimSpace(l.Detail), 1000), Tags: l.Tags, Files: l.Files}
	for _, src := range l.Sources {
		v.Sources = append(v.Sources, string(src.TaskID))
	}
	return v
}

// relay applies a decision: each recipient the thresholds allow gets a
// message (after the SyncerRelay hooks), held until its rate allows.
func (s *Syncer) relay(ctx context.Context, l store.Learning, observed time.Time, ev Evaluation, d Decision, by string) {
	srcID := ev.Source.TaskID
	byID := map[task.ID]Candidate{}
	for _, c := range ev.Candidates {
		byID[c.TaskID] = c
	}
	if len(d.Recipients) == 0 {
		code := "not-relevant"
		if by == "persona" {
			code = "persona-skipped"
		}
		reason := words.Or(d.SkipReason, "no recipient was relevant enough")
		s.ignore(ctx, srcID, event.SyncIgnored{LearningID: l.ID, Reason: code, Detail: words.Clip(strings.TrimSpace(reason), 300)})
		return
	}
	for _, r := range d.Recipients {
		c, ok := byID[r.TaskID]
		m := s.members[r.TaskID]
		if !ok || m == nil || !m.running {
			continue // validated against the candidates; one may have finished since
		}
		if !slices.Contains(c.Allowed, r.Urgency) {
			s.ignore(ctx, srcID, event.SyncIgnored{LearningID: l.ID, To: string(r.TaskID), Reason: "threshold",
				Detail: fmt.Sprintf("%s is not allowed for it (allowed: %s)", r.Urgency, strings.Join(c.Allowed, ", "))})
			continue
		}
		msg := store.SyncMessage{LearningID: l.ID, From: srcID, TaskID: r.TaskID, Urgency: r.Urgency, Relevance: r.Relevance,
			Score: round2(c.Score), Message: words.Clip(strings.TrimSpace(r.Message), s.cfg.MaxMessage), DecidedBy: by, State: store.SyncHeld,
			Reason: reasonOf(c), CreatedAt: s.o.Now().UTC()}
		s.send(ctx, m, msg, c.Allowed, observed)
	}
}

// reasonOf says why a candidate heard a learning (who decided is the
// message's DecidedBy).
func reasonOf(c Candidate) string {
	rel := "relevant"
	if len(c.Relations) > 0 {
		rel = strings.Join(c.Relations, ", ")
	}
	return fmt.Sprintf("%s; score %.2f", rel, c.Score)
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

// RelayDecision is the SyncerRelay hook's decision: one message about to
// be queued. A hook may change the message or urgency, or block it.
type RelayDecision struct {
	LearningID int64   `json:"learning_id"`
	From       task.ID `json:"from"`
	To         task.ID `json:"to"`
	Urgency    string  `json:"urgency"`
	Message    string  `json:"message"`
	Reason     string  `json:"reason"`
}

// send stores msg (held) after the SyncerRelay hooks, then dispatches the
// recipient's held messages as its rate allows.
func (s *Syncer) send(ctx context.Context, m *member, msg store.SyncMessage, allowed []string, observed time.Time) {
	d := RelayDecision{LearningID: msg.LearningID, From: msg.From, To: msg.TaskID, Urgency: msg.Urgency, Message: msg.Message, Reason: msg.Reason}
	v := s.o.Hooks.Decide(ctx, hooks.SyncerRelay, msg.TaskID, &d, func() error {
		if urgencyRank(d.Urgency) >= len(urgencies) {
			return fmt.Errorf("urgency %q is not blocking, helpful or fyi", d.Urgency)
		}
		if !slices.Contains(allowed, d.Urgency) {
			return fmt.Errorf("urgency %q is above what the thresholds allow this task (%s)", d.Urgency, strings.Join(allowed, ", "))
		}
		if strings.TrimSpace(d.Message) == "" {
			return errors.New("the message is empty")
		}
		return nil
	})
	if v.Modified {
		msg.Urgency, msg.Message, msg.DecidedBy = d.Urgency, words.Clip(strings.TrimSpace(d.Message), s.cfg.MaxMessage), "hook"
	}
	if v.Blocked {
		msg.State, msg.Note = store.SyncBlocked, words.Or(v.Reason, "blocked by a SyncerRelay hook")
	}
	lat := s.o.Now().Sub(observed).Milliseconds()
	stored, _, err := s.o.Knowledge.AddSyncMessage(ctx, msg, func(sm store.SyncMessage) []event.Event {
		if sm.State != store.SyncBlocked {
			return nil
		}
		return []event.Event{event.New(sm.CreatedAt, sm.From, event.SyncIgnored{LearningID: sm.LearningID, To: string(sm.TaskID),
			MessageID: sm.ID, Reason: "hook-blocked", Detail: sm.Note})}
	})
	if errors.Is(err, store.ErrExists) {
		return // sent already (a sweep raced the event)
	}
	if err != nil {
		s.log.Warn("storing a sync message", "to", msg.TaskID, "err", err)
		return
	}
	if stored.State == store.SyncBlocked {
		s.count(func(st *Stats) { st.Ignored["hook-blocked"]++ })
		s.o.Hooks.Notify(hooks.SyncerIgnored, stored.From, &stored)
		return
	}
	m.held++
	s.count(func(st *Stats) { st.Held++ })
	s.latency[stored.ID] = lat
	s.dispatch(ctx, m.t.ID, s.o.Now())
}

// dispatch queues as many of a task's held messages as its rate limit and
// cooldown allow, the most urgent first, into its injection queue: they
// reach its model together at its next turn boundary; a blocking one
// interrupts the turn in flight. Held messages past their time to live
// are dropped; beyond the backlog cap, the least urgent are.
// forgotten says whether a learning was removed from the store.
// queue puts one held message into the task's injection queue.
// injection renders a sync message for the executor's door.
// drop marks a held message ignored. Only the loop calls it.
// ignoreMessage records a message as ignored; it touches no loop state.
// dropHeld drops every message held for a task.
// ignore records that a learning was not relayed (to anyone, or to one
// task).
// onDelivered marks the sync messages among a receipt's injections
// delivered.
// sweep dispatches held messages whose time came, and offers recent
// learnings to tasks that started running after they were evaluated.
// focusOf summarizes a tool call: its name and main argument.
func focusOf(p event.ToolCall) string {
	var args map[string]any
	_ = json.Unmarshal(p.Args, &args)
	for _, k := range []string{"path", "file_path", "command", "pattern"} {
		if v, ok := args[k].(string); ok && v != "" {
			return p.Name + " " + words.Clip(strings.TrimSpace(v), 120)
		}
	}
	return p.Name
}
