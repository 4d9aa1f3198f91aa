package stuck

import (
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// persist finds the same call repeated whatever its noisy result: results
// alike once every number is masked (Loose), in the same tree state, more
// times than an exact repeat needs.
//
// A call that waits on purpose (sleep, wait, watch) is a poll: what it
// watches may be moving (a CI run's counts), so Persist leaves it alone; a
// poll whose result does not move is a Repeat at 4, and a poll that never
// ends runs into the spend checks.
func (d *Detector) persist(res []Step, s Step) (Finding, bool) {
	need := d.cfg.Persist
	if isPoll(s.key) {
		return Finding{}, false
	}
	if len(res) < need {
		return Finding{}, false
	}
	if p := res[len(res)-2]; p.Epoch != s.Epoch || p.Error != s.Error || !d.sameCall(&p, &s) {
		return Finding{}, false
	}
	loose := func(r Step) string {
		if r.loose == "" && !r.Error {
			return Mask(r.shape)
		}
		return r.loose
	}
	sl := loose(s)
	last, n := len(res)-1, 1
	for i := last - 1; i >= 0 && n < need; i-- {
		r := &res[i]
		if r.Epoch != s.Epoch || r.Error != s.Error || !d.sameCall(r, &s) || !Similar(loose(*r), sl, d.cfg.Loose) {
			break
		}
		n++
	}
	if n < need {
		return Finding{}, false
	}
	return Finding{Check: Persist, Status: "stuck", Step: s.N, Key: string(Persist) + " " + s.key,
		Diagnosis: fmt.Sprintf("the same call %d times in a row, its result changing only in noise, no file changed: %s", n, words.Clip(s.key, 120)),
		Evidence:  evidenceSpan(res[last-n+1:], s)}, true
}

// sameFailure finds the same failure met again and again, through varying
// calls or across edits: the last SameFailure failed results say the same
// thing once numbers are masked. Edits that leave a check failing the same
// way are not progress, when they are attempts at one thing: edits between
// the failures touching more than two files are work across the tree while
// a failure stands (a broken test elsewhere, run with every `go test ./...`),
// and are left alone.
func (d *Detector) sameFailure(res []Step, s Step) (Finding, bool) {
	if !s.Error {
		return Finding{}, false
	}
	var at [8]int
	idx := append(at[:0], len(res)-1) // the failures, newest first
	for i := len(res) - 2; i >= 0 && len(idx) < d.cfg.SameFailure; i-- {
		r := &res[i]
		if !r.Error {
			continue // edits and other steps between the failures
		}
		if !d.similar(r, &s) {
			break
		}
		idx = append(idx, i)
	}
	if len(idx) < d.cfg.SameFailure {
		return Finding{}, false
	}
	run := make([]Step, len(idx))
	for k, i := range idx {
		run[k] = res[i]
	}
	files := map[string]bool{}
	for _, c := range d.changes {
		if c.n >= run[len(run)-1].N && c.n <= s.N {
			files[c.path] = true
		}
	}
	if len(files) > 2 {
		return Finding{}, false
	}
	calls := map[uint64]bool{}
	for _, r := range run {
		calls[r.kw] = true
	}
	return Finding{Check: SameFailure, Status: "stuck", Step: s.N, Key: string(SameFailure) + " " + words.Clip(s.shape, 200),
		Diagnosis: fmt.Sprintf("the same failure %d times (%d different calls, edits between did not change it): %s", len(run), len(calls), words.Clip(s.shape, 120)),
		Evidence:  evidence(run, s)}, true
}

// modelError records a failed model call, a pause for one, or a restart
// (counted in d.restarts by the caller). Failed calls are counted until a
// model call answers, restarts until progress; a resume resets neither.
func (d *Detector) modelError(now time.Time, what string) []Finding {
	if !strings.HasPrefix(what, "restarted") {
		d.modelErrs++
	}
	d.modelLog = append(d.modelLog, what)
	if len(d.modelLog) > d.cfg.ModelErrors {
		d.modelLog = d.modelLog[1:]
	}
	n := d.modelErrs + d.restarts
	if n < d.cfg.ModelErrors {
		return nil
	}
	ev := make([]event.Evidence, 0, len(d.modelLog))
	for _, w := range d.modelLog {
		ev = append(ev, event.Evidence{Step: d.n, Kind: "usage", What: words.Clip(w, 160)})
	}
	return []Finding{{Check: ModelErrors, Status: "stuck", Step: d.n, Key: string(ModelErrors),
		Diagnosis: fmt.Sprintf("%d failed model calls (or pauses for them) and %d restarts with no answer or progress between (last at %s)", d.modelErrs, d.restarts, now.UTC().Format(time.RFC3339)),
		Evidence:  ev}}
}

// ask records a question to the user and finds it asked again, reworded:
// questions sharing most of their content words.
func (d *Detector) ask(p event.NeedsInput) []Finding {
	q := contentWords(p.Question)
	var same []string
	for _, o := range d.questions {
		if sameQuestion(contentWords(o), q) {
			same = append(same, o)
		}
	}
	d.questions = append(d.questions, p.Question)
	if len(d.questions) > 8 {
		d.questions = d.questions[1:]
	}
	if len(same)+1 < d.cfg.Reask {
		return nil
	}
	var ev []event.Evidence
	for _, o := range append(same, p.Question) {
		ev = append(ev, event.Evidence{Step: d.n, Kind: "text", What: words.Clip(words.OneLine(o), 160)})
	}
	return []Finding{{Check: Reask, Status: "stuck", Step: d.n, Key: string(Reask) + " " + strings.Join(q, " "),
		Diagnosis: fmt.Sprintf("the same question asked %d times after answers", len(same)+1),
		Evidence:  ev}}
}

// contentWords returns a text's words of three letters or more, lower case,
// without the commonest function words.
func contentWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}) {
		if len(w) >= 3 && !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

var stopWords = map[string]bool{"the": true, "and": true, "for": true, "should": true, "would": true, "could": true,
	"you": true, "use": true, "which": true, "what": true, "this": true, "that": true, "with": true, "want": true,
	"please": true, "can": true, "are": true, "was": true, "did": true, "does": true, "have": true, "there": true,
	"tell": true, "let": true, "know": true, "one": true, "from": true, "into": true, "like": true, "prefer": true}

// sameQuestion: at least two content words shared, covering 60% of the
// shorter question.
func sameQuestion(a, b []string) bool {
	set := map[string]bool{}
	for _, w := range a {
		set[w] = true
	}
	shared, seen := 0, map[string]bool{}
	for _, w := range b {
		if set[w] && !seen[w] {
			shared++
		}
		seen[w] = true
	}
	n := min(len(set), len(seen))
	return shared >= 2 && float64(shared) >= 0.6*float64(n)
}

// isPoll reports whether a canonical call's words include a deliberate
// wait.
func isPoll(key string) bool {
	for i := 0; i < len(key); {
		for i < len(key) && isKeySep(key[i]) {
			i++
		}
		j := i
		for j < len(key) && !isKeySep(key[j]) {
			j++
		}
		switch key[i:j] {
		case "sleep", "wait", "watch", "--watch", "--wait", "--follow":
			return true
		}
		i = j
	}
	return false
}

// circle records a file change that took the tree back to a state it had
// been in (not the state it was in: rewriting the same bytes is no move)
// and finds the task going in circles: Circles such changes in a row with
// nothing new between (no new state, no new result), as edits
// A → B → C → A → B … that try the same few versions over and over. A
// refactor that passes through an earlier state once and moves on is a
// single return, and the next new state ends the run.
func (d *Detector) circle(path string, epoch int) []Finding {
	if len(d.returns) == d.cfg.Circles {
		d.returns = append(d.returns[:0], d.returns[1:]...)
	}
	d.returns = append(d.returns, fileReturn{n: d.n, path: path, epoch: epoch})
	if len(d.returns) < d.cfg.Circles {
		return nil
	}
	ev := make([]event.Evidence, 0, len(d.returns))
	states := map[int]bool{}
	for _, r := range d.returns {
		states[r.epoch] = true
		ev = append(ev, event.Evidence{Step: r.n, Kind: "file", What: fmt.Sprintf("%s: the files back to state e%d", words.Clip(r.path, 100), r.epoch)})
	}
	return []Finding{{Check: Circles, Status: "stuck", Step: d.n, Key: string(Circles),
		Diagnosis: fmt.Sprintf("the files went back to states they had been in %d times in a row (%d states, over and over), nothing new between", len(d.returns), len(states)),
		Evidence:  ev}}
}
