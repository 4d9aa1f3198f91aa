package supervise

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/executor"
	"github.com/neuraphage/neuraphage-go/internal/hooks"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/stuck"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// rung is how far up the ladder a task is.
type rung int

const (
	none rung = iota
	hint
	warning
	critical
	escalated
	paused
	aborted
)

func (r rung) String() string {
	return [...]string{"none", "hint", "warning", "critical", "escalated", "paused", "aborted"}[r]
}

// severity returns the nudge severity after n unheeded nudges.
func severity(n int) rung {
	switch {
	case n <= 0:
		return hint
	case n == 1:
		return warning
	}
	return critical
}

// step feeds one event to the task's window and acts on what it finds.
func (w *Watcher) step(ctx context.Context, wt *watched, e event.Event) {
	fs := wt.apply(e)
	switch p := e.Payload.(type) {
	case event.TaskStatus:
		if wt.running {
			wt.started = e.Time
		}
		if wt.onStatus(p) {
			w.noteHealth(ctx, wt)
		}
		return
	case event.Delivered:
		wt.delivered(p)
	}
	if wt.heeded() {
		// Progress: the finding no longer stands, and a nudge that was
		// read is heeded: the ladder starts again.
		w.recover(ctx, wt)
	}
	for _, f := range fs {
		w.st.Tier1[string(f.Check)]++
	}
	w.handle(ctx, wt, fs)
}

// onStatus applies a status change to the ladder and reports whether it
// started again. A resume by the task's user (to running after a pause or
// an answer, through the queue or not) starts a fresh ladder with the same
// window (a loop that spans the pause is still one loop); an escalation
// stays. A start the user did not ask for (a requeue, a daemon restart)
// keeps the ladder where it was: the loop is the same loop.
func (wt *watched) onStatus(p event.TaskStatus) bool {
	switch p.To {
	case task.Paused, task.Waiting:
		wt.held = true
	case task.Running:
		if !wt.held {
			return false
		}
		wt.held = false
		wt.rung, wt.unheeded, wt.nudgeInj, wt.waitFrom, wt.judgedRung = none, 0, 0, 0, -1
		wt.finding, wt.status, wt.diagnosis, wt.tier = nil, "healthy", "", 0
		return true
	}
	return false
}

// delivered notes that the model read the nudge the ladder waits on: it
// has StepsToHeed tool calls from here.
func (wt *watched) delivered(p event.Delivered) {
	if wt.nudgeInj != 0 && slices.Contains(p.InjectionIDs, wt.nudgeInj) {
		wt.waitFrom = wt.d.Counters().Calls
	}
}

// heeded reports whether the task progressed since its finding, with the
// nudge sent for it (if any) read: the ladder starts again.
func (wt *watched) heeded() bool {
	return wt.finding != nil && wt.d.Counters().Progress > wt.findingAt && (wt.nudgeInj == 0 || wt.waitFrom >= 0)
}

// recover marks a task healthy again after progress.
func (w *Watcher) recover(ctx context.Context, wt *watched) {
	wt.recovered()
	wt.lastCheck = w.o.Now()
	w.noteHealth(ctx, wt)
}

func (wt *watched) recovered() {
	if wt.rung < paused {
		wt.rung, wt.unheeded, wt.nudgeInj, wt.waitFrom, wt.judgedRung = none, 0, 0, 0, -1
	}
	wt.finding, wt.status, wt.diagnosis, wt.tier, wt.confidence = nil, "healthy", "progress after the finding", 1, 0.6
}

// relive applies one of the Watcher's recorded actions, or an observation
// the ladder reads, to the ladder of a window rebuilt at start, as the
// Watcher did live but without acting: a restarted daemon continues the
// ladder where it was (the rung, the unheeded nudges, a nudge sent and
// not yet read or not yet heeded), and a task that progressed after its
// nudge, or that its user resumed, starts afresh as it would have.
func (wt *watched) relive(e event.Event) {
	c := wt.d.Counters()
	switch p := e.Payload.(type) {
	case event.TaskStatus:
		wt.onStatus(p)
		return
	case event.Delivered:
		wt.delivered(p)
	case event.WatcherNudge:
		wt.finding = &stuck.Finding{Check: stuck.Check(p.Check), Status: "stuck", Diagnosis: p.Diagnosis, Step: c.Steps,
			Key: "relived:" + p.Check, Evidence: p.Evidence}
		wt.findingAt, wt.unheeded = c.Progress, p.Unheeded
		wt.rung = max(wt.rung, hint)
		for r := hint; r <= critical; r++ {
			if r.String() == p.Severity {
				wt.rung = r
			}
		}
		wt.nudgeInj, wt.waitFrom = p.InjectionID, -1
		if p.InjectionID == 0 {
			wt.waitFrom = c.Calls
		}
		wt.status, wt.diagnosis, wt.tier = "stuck", p.Diagnosis, p.Tier
		return
	case event.WatcherEscalate:
		if wt.nudgeInj != 0 && wt.waitFrom >= 0 {
			wt.unheeded++
		}
		wt.escalated, wt.nudgeInj, wt.waitFrom = true, 0, c.Calls
		if p.Refused == "" {
			wt.rung = escalated
		}
		return
	case event.WatcherPause:
		wt.rung = paused
		return
	case event.WatcherAbort:
		wt.rung = aborted
		return
	}
	if wt.heeded() {
		wt.recovered()
	}
}

// tick runs the clock checks on one task and the periodic tier-2 look.
func (w *Watcher) tick(ctx context.Context, wt *watched, now time.Time) {
	fs := wt.d.Tick(wt.clock(now))
	for _, f := range fs {
		w.st.Tier1[string(f.Check)]++
	}
	if len(fs) > 0 {
		w.handle(ctx, wt, fs)
		return
	}
	if w.tier2On() && w.cfg.Tier2Every > 0 && wt.finding == nil && !wt.judging &&
		now.Sub(later(wt.started, wt.lastJudge)) >= w.cfg.Tier2Every && wt.d.Counters().Steps >= w.cfg.Stuck.Grace {
		w.judge(ctx, wt, nil, nil)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (w *Watcher) tier2On() bool { return w.cfg.Tier2 && w.o.Judge != nil }

// handle acts on tier 1's findings at one step.
func (w *Watcher) handle(ctx context.Context, wt *watched, fs []stuck.Finding) {
	var f, confirm, weak *stuck.Finding
	for i := range fs {
		if fs[i].Tier2Only {
			if weak == nil {
				weak = &fs[i]
			}
			if fs[i].Confirm && confirm == nil {
				confirm = &fs[i]
			}
			continue
		}
		f = &fs[i]
		break
	}
	if f == nil {
		switch {
		case confirm != nil && w.tier2On() && !wt.judging && wt.rung < paused && w.ready(wt):
			// Acted on only if tier 2, shown the finding, agrees
			// (onJudged); tier 1 alone never acts on it.
			w.judge(ctx, wt, confirm, nil)
		case weak != nil && w.tier2On() && !wt.judging && w.o.Now().Sub(wt.lastJudge) >= time.Minute:
			w.judge(ctx, wt, nil, weak) // a look, named after what was seen
		}
		return
	}
	wt.finding, wt.findingAt = f, wt.d.Counters().Progress
	wt.status, wt.diagnosis, wt.tier, wt.lastCheck = f.Status, f.Diagnosis, 1, w.o.Now()
	wt.confidence = 0.6
	if f.Exact {
		wt.confidence = 0.8
	}
	if wt.rung >= paused {
		return // it is the user's now
	}
	w.noteHealth(ctx, wt)
	if !w.ready(wt) {
		return
	}
	if w.tier2On() && !wt.judging && wt.judgedRung != wt.rung {
		// Tier 2 judges once per rung: first for the nudge's text, then
		// whether it agrees the task is stuck (a second signal).
		w.judge(ctx, wt, f, nil) // the action follows the judgement
		return
	}
	if wt.judging {
		return
	}
	w.advance(ctx, wt, f, nil)
}

// ready reports whether the last action has had its chance: a nudge read
// by the model and StepsToHeed tool calls made since, or as many calls
// since an escalation.
func (w *Watcher) ready(wt *watched) bool {
	if wt.rung == none {
		return true
	}
	if wt.waitFrom < 0 {
		return false // the nudge is not read yet
	}
	return wt.d.Counters().Calls-wt.waitFrom >= w.cfg.StepsToHeed
}

// advance takes the ladder's next step for a finding that persists.
func (w *Watcher) advance(ctx context.Context, wt *watched, f *stuck.Finding, v *Verdict) {
	if wt.nudgeInj != 0 && wt.waitFrom >= 0 {
		wt.unheeded++ // read, and no progress followed
		wt.nudgeInj = 0
	}
	agree := v != nil && (v.Status == "stuck" || v.Status == "runaway") && v.Confidence >= 0.7
	signals := []string{"tier1:" + string(f.Check)}
	if agree {
		signals = append(signals, "tier2:"+v.Status)
	}
	if w.hardHit(wt) && (wt.unheeded >= 1 || agree) {
		if !agree {
			signals = append(signals, fmt.Sprintf("persisted after %d nudges", wt.unheeded))
		}
		w.abort(ctx, wt, f, "hard-limit", signals)
		return
	}
	stop := w.cfg.Pause || w.cfg.Abort
	switch {
	case agree && wt.unheeded >= 1 && stop && (v.Recommendation == "pause" || v.Recommendation == "abort"):
		w.stop(ctx, wt, f, signals)
	case agree && wt.unheeded >= 1 && v.Recommendation == "escalate" && w.cfg.Escalate && !wt.escalated:
		w.escalate(ctx, wt, f)
	case wt.unheeded < w.cfg.Nudges:
		w.nudge(ctx, wt, f, v, severity(wt.unheeded))
	case w.cfg.Escalate && !wt.escalated:
		w.escalate(ctx, wt, f)
	case stop:
		if !agree {
			signals = append(signals, fmt.Sprintf("persisted after %d nudges", wt.unheeded))
		}
		w.stop(ctx, wt, f, signals)
	default:
		w.nudge(ctx, wt, f, v, critical)
	}
}

func (w *Watcher) hardHit(wt *watched) bool {
	c := wt.d.Counters()
	return w.cfg.HardTokens > 0 && c.TokensSinceProgress >= w.cfg.HardTokens || w.cfg.HardUSD > 0 && c.USDSinceProgress >= w.cfg.HardUSD
}

// NudgeDecision is what WatcherNudge hooks see and may change.
type NudgeDecision struct {
	Severity  string           `json:"severity"`
	Message   string           `json:"message"`
	Check     string           `json:"check,omitempty"`
	Diagnosis string           `json:"diagnosis,omitempty"`
	Tier      int              `json:"tier"`
	Evidence  []event.Evidence `json:"evidence,omitempty"`
}

// nudge tells the task what the Watcher saw, through the one door.
func (w *Watcher) nudge(ctx context.Context, wt *watched, f *stuck.Finding, v *Verdict, sev rung) {
	d := NudgeDecision{Severity: sev.String(), Message: Message(f, sev), Tier: 1}
	if f != nil {
		d.Check, d.Diagnosis, d.Evidence = string(f.Check), f.Diagnosis, f.Evidence
	}
	if v != nil && v.NudgeMessage != "" {
		d.Message, d.Tier = v.NudgeMessage, 2
		if v.Diagnosis != "" {
			d.Diagnosis = v.Diagnosis
		}
	}
	verdict := w.o.Hooks.Decide(ctx, hooks.WatcherNudge, wt.t.ID, &d, func() error {
		switch {
		case strings.TrimSpace(d.Message) == "":
			return errors.New("the nudge message is empty")
		case len(d.Message) > executor.MaxInjectionLen:
			return fmt.Errorf("the nudge message is %d bytes; at most %d", len(d.Message), executor.MaxInjectionLen)
		case !slices.Contains([]string{"hint", "warning", "critical"}, d.Severity):
			return fmt.Errorf("severity %q is not hint, warning or critical", d.Severity)
		}
		return nil
	})
	c := wt.d.Counters()
	if verdict.Blocked {
		// Not sent; the ladder waits as if it had been, so the hook is
		// not asked again at every step.
		w.st.HookBlocks++
		wt.rung, wt.nudgeInj, wt.waitFrom = max(wt.rung, hint), 0, c.Calls
		return
	}
	inj, err := w.o.Actions.Inject(ctx, inject.Injection{TaskID: wt.t.ID, Kind: inject.Nudge, Source: inject.FromWatcher,
		Attrs: map[string]string{"severity": d.Severity, "check": d.Check}, Text: d.Message, Urgent: d.Severity == "critical"})
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("nudging a task", "task", wt.t.ID, "err", err)
		}
		return
	}
	w.st.Nudges++
	for r := hint; r <= critical; r++ {
		if r.String() == d.Severity {
			wt.rung = r
		}
	}
	wt.nudgeInj, wt.waitFrom = inj.ID, -1
	w.record(ctx, wt.t.ID, event.WatcherNudge{Severity: d.Severity, Message: d.Message, Check: d.Check, Diagnosis: d.Diagnosis,
		Tier: d.Tier, InjectionID: inj.ID, Unheeded: wt.unheeded, Evidence: d.Evidence})
	w.noteHealth(ctx, wt)
}

// Message is the tier-1 nudge for a finding at a severity: what was seen,
// with its evidence, and what to do instead.
func Message(f *stuck.Finding, sev rung) string {
	var b strings.Builder
	switch sev {
	case hint:
		b.WriteString("A note from the watcher: ")
	case warning:
		b.WriteString("Warning from the watcher, your earlier nudge did not change anything: ")
	default:
		b.WriteString("Critical, from the watcher: you are still repeating yourself after several nudges; the next step is a pause for your user. ")
	}
	if f == nil {
		b.WriteString("check that you are still moving toward the task's goal.")
		return b.String()
	}
	b.WriteString(f.Diagnosis)
	b.WriteString(".\n")
	if n := len(f.Evidence); n > 0 {
		b.WriteString("Last seen: " + f.Evidence[n-1].What + "\n")
	}
	switch f.Check {
	case stuck.Failing, stuck.Repeat, stuck.Dense:
		b.WriteString("Running it again will give the same result. Read the error, change the code, the command or the approach, or ask your user with ask_user.")
	case stuck.Alternation:
		b.WriteString("You are going back and forth between two steps. Decide which one is right and move on.")
	case stuck.Circles:
		b.WriteString("You keep putting the files back into versions you already tried. Stop cycling: say what each version got wrong, then try something new or ask your user with ask_user.")
	case stuck.Monologue, stuck.Apologies:
		b.WriteString("Stop explaining and act: make the next concrete change, or ask your user with ask_user.")
	case stuck.EmptyReplies:
		b.WriteString("Your replies are empty. Make a tool call, finish with complete_task, or ask your user.")
	case stuck.ContextErrors:
		b.WriteString("Your context keeps overflowing. Read smaller parts of files and keep tool output short.")
	case stuck.Runaway, stuck.NoProgress:
		b.WriteString("Step back: state what is blocking you in one sentence, then take the smallest step that tests it.")
	default:
		b.WriteString("Change your approach.")
	}
	return b.String()
}

// EscalateDecision is what WatcherEscalate, WatcherPause and WatcherAbort
// hooks see.
type EscalateDecision struct {
	Action    string           `json:"action"` // escalate | pause | abort
	Diagnosis string           `json:"diagnosis"`
	Check     string           `json:"check,omitempty"`
	Signals   []string         `json:"signals,omitempty"`
	Evidence  []event.Evidence `json:"evidence,omitempty"`
}

func (w *Watcher) escalate(ctx context.Context, wt *watched, f *stuck.Finding) {
	wt.escalated = true
	reason := "the watcher: " + f.Diagnosis
	e, err := w.o.Actions.Escalate(ctx, wt.t.ID, "", reason, "watcher")
	rec := event.WatcherEscalate{Diagnosis: f.Diagnosis, Check: string(f.Check), Evidence: f.Evidence}
	c := wt.d.Counters()
	wt.nudgeInj, wt.waitFrom = 0, c.Calls
	var refused *executor.EscalationRefusedError
	switch {
	case errors.As(err, &refused):
		rec.Refused = refused.Err.Error()
	case err != nil:
		if ctx.Err() == nil {
			w.log.Warn("escalating a task", "task", wt.t.ID, "err", err)
		}
		return
	default:
		rec.From, rec.To = e.From, e.To
		w.st.Escalations++
		wt.rung = escalated
	}
	w.o.Hooks.Notify(hooks.WatcherEscalate, wt.t.ID, EscalateDecision{Action: "escalate", Diagnosis: f.Diagnosis, Check: string(f.Check), Evidence: f.Evidence})
	w.record(ctx, wt.t.ID, rec)
	w.noteHealth(ctx, wt)
}

// stop pauses the task for its user, or aborts it when so configured.
func (w *Watcher) stop(ctx context.Context, wt *watched, f *stuck.Finding, signals []string) {
	if w.cfg.Abort {
		w.abort(ctx, wt, f, "configured", signals)
		return
	}
	msg := "paused by the watcher: " + f.Diagnosis + " (resume it with `neuraphage task resume " + string(wt.t.ID) + "`)"
	if _, err := w.o.Actions.Inject(ctx, inject.Injection{TaskID: wt.t.ID, Kind: inject.Pause, Source: inject.FromWatcher, Text: msg}); err != nil {
		if ctx.Err() == nil {
			w.log.Warn("pausing a task", "task", wt.t.ID, "err", err)
		}
		return
	}
	w.st.Pauses++
	wt.rung = paused
	w.o.Hooks.Notify(hooks.WatcherPause, wt.t.ID, EscalateDecision{Action: "pause", Diagnosis: f.Diagnosis, Check: string(f.Check), Signals: signals, Evidence: f.Evidence})
	w.record(ctx, wt.t.ID, event.WatcherPause{Diagnosis: f.Diagnosis, Check: string(f.Check), Signals: signals, Evidence: f.Evidence})
	w.noteHealth(ctx, wt)
}

func (w *Watcher) abort(ctx context.Context, wt *watched, f *stuck.Finding, why string, signals []string) {
	reason := "aborted by the watcher: " + f.Diagnosis
	if why == "hard-limit" {
		c := wt.d.Counters()
		reason = fmt.Sprintf("aborted by the watcher: %d tokens ($%.2f) since the last progress passed the hard limit; %s",
			c.TokensSinceProgress, c.USDSinceProgress, f.Diagnosis)
	}
	if _, err := w.o.Actions.Cancel(ctx, wt.t.ID, reason); err != nil {
		if ctx.Err() == nil {
			w.log.Warn("aborting a task", "task", wt.t.ID, "err", err)
		}
		return
	}
	w.st.Aborts++
	wt.rung = aborted
	w.o.Hooks.Notify(hooks.WatcherAbort, wt.t.ID, EscalateDecision{Action: "abort", Diagnosis: f.Diagnosis, Check: string(f.Check), Signals: signals, Evidence: f.Evidence})
	w.record(ctx, wt.t.ID, event.WatcherAbort{Diagnosis: f.Diagnosis, Check: string(f.Check), Reason: why, Signals: signals, Evidence: f.Evidence})
	w.noteHealth(ctx, wt)
}

// CheckDecision is what WatcherCheck hooks see.
type CheckDecision struct {
	event.HealthCheck
}

// noteHealth records a TaskHealthCheck when the task's status, check or
// ladder step changed, and tells WatcherCheck hooks.
func (w *Watcher) noteHealth(ctx context.Context, wt *watched) {
	check := ""
	var ev []event.Evidence
	step := 0
	if wt.finding != nil {
		check, ev, step = string(wt.finding.Check), wt.finding.Evidence, wt.finding.Step
	}
	key := wt.status + "|" + check + "|" + wt.rung.String()
	if key == wt.recorded {
		return
	}
	if wt.recorded == "" && wt.status == "healthy" && wt.rung == none {
		wt.recorded = key // nothing to say about a task that just started
		return
	}
	wt.recorded = key
	h := event.HealthCheck{Status: wt.status, Confidence: wt.confidence, Diagnosis: wt.diagnosis, Check: check, Tier: max(wt.tier, 1),
		Ladder: wt.rung.String(), Step: step, Degraded: w.deg.On(), Evidence: ev}
	w.o.Hooks.Notify(hooks.WatcherCheck, wt.t.ID, CheckDecision{h})
	w.record(ctx, wt.t.ID, h)
}

// judge asks tier 2 in the background; the reply comes back to the loop.
// f is a finding to judge; signal, for a look without one, is the weak
// signal that asked for it (nil for a periodic look).
func (w *Watcher) judge(ctx context.Context, wt *watched, f, signal *stuck.Finding) {
	wt.judging = true
	if f != nil {
		wt.judgedRung = wt.rung
	}
	w.st.Tier2Calls++
	snap := Snapshot{Task: wt.t, Counters: wt.d.Counters(), Window: wt.d.Window(), Finding: f, Signal: signal, Ladder: wt.rung.String(), Unheeded: wt.unheeded}
	id := wt.t.ID
	w.rt.Go(ctx, func(ctx context.Context) func(context.Context) {
		v, err := w.ask(ctx, snap)
		return func(ctx context.Context) {
			w.guard(id, func(wt *watched) { w.onJudged(ctx, wt, f, v, err) })
		}
	})
}

// ask runs the judgement; a panic in it is a failed judgement, counted.
func (w *Watcher) ask(ctx context.Context, snap Snapshot) (v Verdict, err error) {
	if p := w.rt.Safely(func() {
		if w.o.Excerpt != nil {
			snap.Excerpt = w.o.Excerpt(ctx, snap.Task.ID)
		}
		v, err = w.o.Judge.Judge(ctx, snap)
	}, "a tier-2 judgement panicked", "task", snap.Task.ID); p != nil {
		return Verdict{}, fmt.Errorf("the judgement panicked: %v", p)
	}
	return v, err
}

// onJudged acts on a tier-2 reply. A failure falls back to tier 1 alone.
func (w *Watcher) onJudged(ctx context.Context, wt *watched, finding *stuck.Finding, v Verdict, err error) {
	wt.judging = false
	wt.lastJudge = w.o.Now()
	if err != nil {
		w.setDegraded(true, "tier 2 failed: "+words.Clip(err.Error(), 200))
		if finding != nil && !finding.Confirm && wt.finding != nil && wt.rung < paused && w.ready(wt) {
			w.advance(ctx, wt, wt.finding, nil)
		}
		return
	}
	w.setDegraded(false, "")
	if finding == nil {
		// A periodic or a weak-signal look: tier 2 alone may nudge (a
		// hint or a warning), never more.
		if wt.finding != nil || v.Confidence < 0.7 || v.Status == "healthy" || v.NudgeMessage == "" || v.Recommendation == "continue" || !w.ready(wt) {
			return
		}
		wt.status, wt.diagnosis, wt.tier, wt.confidence, wt.lastCheck = v.Status, v.Diagnosis, 2, v.Confidence, w.o.Now()
		w.nudge(ctx, wt, nil, &v, min(severity(wt.unheeded), warning))
		return
	}
	if finding.Confirm {
		w.confirmed(ctx, wt, finding, v)
		return
	}
	if wt.finding == nil || wt.rung >= paused {
		return // progress meanwhile, or the user's now
	}
	wt.tier, wt.confidence = 2, v.Confidence
	if v.Diagnosis != "" && v.Status != "healthy" {
		wt.diagnosis = v.Diagnosis
	}
	if w.ready(wt) {
		w.advance(ctx, wt, wt.finding, &v)
	}
}

// confirmed acts on a finding tier 1 may not act on alone (Confirm: a long
// read without a change may be a survey before a large write) once tier 2,
// shown it, agrees that the task is stuck; otherwise nothing happens.
func (w *Watcher) confirmed(ctx context.Context, wt *watched, f *stuck.Finding, v Verdict) {
	agree := (v.Status == "stuck" || v.Status == "runaway") && v.Confidence >= 0.7 && v.Recommendation != "continue"
	if !agree || wt.rung >= paused || !w.ready(wt) {
		return
	}
	if wt.finding == nil {
		wt.finding, wt.findingAt = f, wt.d.Counters().Progress
	}
	wt.status, wt.diagnosis, wt.tier, wt.confidence, wt.lastCheck = v.Status, words.Or(v.Diagnosis, f.Diagnosis), 2, v.Confidence, w.o.Now()
	w.noteHealth(ctx, wt)
	w.advance(ctx, wt, wt.finding, &v)
}
