package stuck

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// result records a tool result and runs the checks over call/result pairs.
func (d *Detector) result(e event.Event, p event.ToolResult) []Finding {
	d.n++
	d.started++
	d.c.Steps++
	d.c.StepsSinceProgress++
	if d.running == 1 {
		d.toolsDone(e.Time)
	} else {
		d.running = max(d.running-1, 0)
	}
	c, ok := d.takePending(p.CallID)
	if !ok {
		c = pendingCall{key: p.Name, kw: keyWords(p.Name)}
	}
	key := c.key
	if p.Error {
		d.c.Errors++
	}
	exact := p.Hash
	if exact == "" {
		exact = event.ContentHash(wholeWords(p.Preview, p.Tail))
	}
	d.lastCall = c
	s := Step{N: d.n, Kind: "result", Tool: p.Name, Error: p.Error, key: key, kw: c.kw, exact: exact}
	// A failure is the same whatever its numbers (Mask); a success's
	// numbers stay (MaskResult; loose is made when Persist needs it).
	s.shape = resultShape(p.Preview, p.Tail, p.Error)
	if p.Error {
		s.loose = s.shape
	}
	s.words = wordSet(s.shape)
	s.Epoch = d.epoch
	s.What = resultWhat(key, p.Error, s.shape)
	// The checks look back only so far; a success is fresh (progress) when
	// no result of the whole window is the same, and a failure never is.
	d.liken(&s, max(d.cfg.DenseOf, d.cfg.Repeat))
	fresh := !p.Error && s.like == 0
	sig := sigOf(&s)
	for i := len(d.rwin.s) - 1 - s.likeN; fresh && i >= 0; i-- {
		fresh = d.rwin.sigs[i] != sig || !d.same(&d.rwin.s[i], &s)
	}
	d.push(s)
	d.sinceFS++
	if c.read {
		d.readsFS++
	}
	if fresh {
		d.progress(e.Time)
	}
	if !p.Error {
		d.apolog = 0 // an action worked
	}
	var out []Finding
	res := d.results()
	if f, ok := d.repeat(res, s); ok {
		out = append(out, f)
	}
	if f, ok := d.failing(res, s); ok {
		out = append(out, f)
	}
	if f, ok := d.alternation(res); ok {
		out = append(out, f)
	}
	if len(out) == 0 {
		if f, ok := d.dense(res); ok {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		if f, ok := d.persist(res, s); ok {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		if f, ok := d.sameFailure(res, s); ok {
			out = append(out, f)
		}
	}
	switch {
	case d.sinceFS >= d.cfg.WanderingAct && d.sinceFS%d.cfg.Wandering == 0 && 2*d.readsFS >= d.sinceFS:
		// Mostly reads: a reader that never writes. Steps that run
		// commands (numbered steps, a migration, polling) only ever get
		// tier 2's look below.
		out = append(out, Finding{Check: Wandering, Status: "struggling", Step: d.n, Key: string(Wandering), Tier2Only: true, Confirm: true,
			Diagnosis: fmt.Sprintf("%d tool results without changing a file, %d of them reads (act once tier 2 confirms)", d.sinceFS, d.readsFS),
			Evidence:  evidence(lastN(res, 5), Step{})})
	case d.sinceFS >= d.cfg.Wandering && d.sinceFS%d.cfg.Wandering == 0:
		out = append(out, Finding{Check: Wandering, Status: "struggling", Step: d.n, Key: string(Wandering), Tier2Only: true,
			Diagnosis: fmt.Sprintf("%d tool results without changing a file, %d of them reads", d.sinceFS, d.readsFS),
			Evidence:  evidence(lastN(res, 5), Step{})})
	}
	return out
}

func errPrefix(b bool) string {
	if b {
		return "error: "
	}
	return ""
}

// resultWhat is a result step's What, built in one allocation:
// words.Clip(key, 100) + " → " + words.Clip(errPrefix(failed)+shape, 120).
func resultWhat(key string, failed bool, shape string) string {
	k, kCut := clipAt(key, 100)
	pre := errPrefix(failed)
	// Clip of pre+shape at 120 bytes, pre being ASCII: whole when it fits,
	// else cut at a rune start of the joined text.
	p, sh, cut := pre, shape, false
	if len(pre)+len(shape) > 120 {
		n := 120
		for n > 0 && !utf8.RuneStart(joinedAt(pre, shape, n)) {
			n--
		}
		if n <= len(pre) {
			p, sh = pre[:n], ""
		} else {
			sh = shape[:n-len(pre)]
		}
		cut = true
	}
	var b strings.Builder
	b.Grow(len(k) + len(words.Ellipsis) + len(" → ") + len(p) + len(sh) + len(words.Ellipsis))
	b.WriteString(k)
	if kCut {
		b.WriteString(words.Ellipsis)
	}
	b.WriteString(" → ")
	b.WriteString(p)
	b.WriteString(sh)
	if cut {
		b.WriteString(words.Ellipsis)
	}
	return b.String()
}

// clipAt is words.Clip(s, n) without the ellipsis: the part kept, and
// whether s was cut.
func clipAt(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// joinedAt is (a+b)[i].
func joinedAt(a, b string, i int) byte {
	if i < len(a) {
		return a[i]
	}
	return b[i-len(a)]
}

// results returns the result steps of the window, oldest first.
func (d *Detector) results() []Step {
	return d.rwin.s
}

// sameCall reports whether two steps are the same call: the same canonical
// call, or the same tool with the same words in another order (a flag
// moved across a path). Numbers, paths and ranges are part of a call's
// identity: `sed -n 1,40p f` and `sed -n 41,80p f` are two calls.
func (d *Detector) sameCall(a, b *Step) bool {
	return a.key == b.key || a.Tool == b.Tool && a.kw == b.kw
}

// keyWords identifies a canonical call's words regardless of their order:
// the sum of the words' hashes (JSON punctuation and white space separate
// words), with their count. Two calls with the same words in another order
// share it; it is computed without allocating.
func keyWords(key string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	var sum, n uint64
	h, in := uint64(offset), false
	for i := 0; i <= len(key); i++ {
		if i == len(key) || isKeySep(key[i]) {
			if in {
				sum += mix(h, 0)
				n++
				h, in = offset, false
			}
			continue
		}
		h = (h ^ uint64(key[i])) * prime
		in = true
	}
	return sum ^ mix(n, 1)
}

func isKeySep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '{', '}', '"', ',', ':', '[', ']':
		return true
	}
	return false
}

// wholeWords joins a result's preview and tail without the words their
// cuts split: a masked value of another width earlier in the output moves
// the cut, and a split word would make two equal results differ.
func wholeWords(preview, tail string) string {
	preview, tail = cutWholeWords(preview, tail)
	return preview + " " + tail
}

// cutWholeWords returns the parts wholeWords joins.
func cutWholeWords(preview, tail string) (string, string) {
	if p, ok := strings.CutSuffix(preview, "…"); ok && tail != "" { // cut only when there is a tail
		if i := strings.LastIndexAny(p, " \n\t"); i >= 0 {
			preview = p[:i]
		}
	}
	if t, ok := strings.CutPrefix(tail, "…"); ok {
		if i := strings.IndexAny(t, " \n\t"); i >= 0 {
			tail = t[i:]
		} else {
			tail = ""
		}
	}
	return preview, tail
}

// resultShape is Mask(wholeWords(preview, tail)) when failed, else
// MaskResult(wholeWords(preview, tail)), with fewer copies: a text with
// nothing to mask (no digit, no temporary path: both masks are then
// words.OneLine) is joined and collapsed in one pass, or not copied at all
// when it is the preview alone on one line; else the joined text is masked
// and the last pass collapses it as it copies.
func resultShape(preview, tail string, failed bool) string {
	preview, tail = cutWholeWords(preview, tail)
	if !maskable(preview) && !maskable(tail) {
		if tail == "" {
			return words.OneLine(preview) // = words.OneLine(preview + " ")
		}
		var w lineWriter
		w.b.Grow(len(preview) + 1 + len(tail))
		w.write(preview, true)
		w.write(" ", true)
		w.write(tail, true)
		return w.b.String()
	}
	body := preview + " " + tail
	if failed {
		return Mask(body)
	}
	return MaskResult(body)
}

// maskable reports whether Mask or MaskResult might replace something in
// s: it holds a digit or a temporary path's start (neither can span the
// space wholeWords puts between preview and tail).
func maskable(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return strings.Contains(s, "/tmp/") || strings.Contains(s, "/var/") || strings.Contains(s, "/private/")
}

// same reports whether two results are the same call with the same result,
// seeing the same files.
func (d *Detector) same(a, b *Step) bool {
	// Equal keys have equal words, so steps whose words differ are
	// neither the same call nor the same step.
	if a.Epoch != b.Epoch || a.Error != b.Error || a.kw != b.kw {
		return false
	}
	if a.exact == b.exact && a.key == b.key {
		return true
	}
	return d.sameCall(a, b) && d.similar(a, b)
}

func (d *Detector) repeat(res []Step, s Step) (Finding, bool) {
	last, n := len(res)-1, 1
	for i := last - 1; i >= 0 && n < d.cfg.Repeat; i-- {
		if !d.sameAt(res, i, last) {
			break
		}
		n++
	}
	if n < d.cfg.Repeat {
		return Finding{}, false
	}
	ev := evidenceSpan(res[last-n+1:], s)
	return Finding{Check: Repeat, Status: "stuck", Step: s.N, Key: string(Repeat) + " " + s.key, Exact: allExact(ev),
		Diagnosis: fmt.Sprintf("the same call with the same result %d times in a row, no file changed: %s", n, words.Clip(s.key, 120)),
		Evidence:  ev}, true
}

func (d *Detector) failing(res []Step, s Step) (Finding, bool) {
	if !s.Error {
		return Finding{}, false
	}
	last, n := len(res)-1, 1
	for i := last - 1; i >= 0 && n < d.cfg.Failing; i-- {
		r := &res[i]
		if !r.Error || r.Epoch != s.Epoch || !d.sameCall(r, &s) {
			break
		}
		n++
	}
	if n < d.cfg.Failing {
		return Finding{}, false
	}
	ev := evidenceSpan(res[last-n+1:], s)
	return Finding{Check: Failing, Status: "stuck", Step: s.N, Key: string(Failing) + " " + s.key, Exact: allExact(ev),
		Diagnosis: fmt.Sprintf("the same call failed %d times in a row with nothing changed in between: %s", n, words.Clip(s.key, 120)),
		Evidence:  ev}, true
}

func (d *Detector) alternation(res []Step) (Finding, bool) {
	n := d.cfg.Alternation
	if len(res) < n {
		return Finding{}, false
	}
	tail := res[len(res)-n:]
	if d.sameCall(&tail[0], &tail[1]) {
		return Finding{}, false
	}
	for i := 2; i < n; i++ {
		a, b := &tail[i], &tail[i-2]
		if a.Epoch != b.Epoch || a.Error != b.Error || !d.sameCall(a, b) || !d.similar(a, b) {
			return Finding{}, false
		}
	}
	last := tail[n-1]
	tail = slices.Clone(tail)
	slices.Reverse(tail)
	return Finding{Check: Alternation, Status: "stuck", Step: last.N, Key: string(Alternation) + " " + tail[0].key + " | " + tail[1].key,
		Diagnosis: fmt.Sprintf("alternating between two calls with the same results over %d steps: %s / %s", n, words.Clip(tail[1].key, 60), words.Clip(tail[0].key, 60)),
		Evidence:  evidence(tail, Step{})}, true
}

func (d *Detector) dense(res []Step) (Finding, bool) {
	last := lastN(res, d.cfg.DenseOf)
	off := len(res) - len(last)
	for i := len(last) - 1; i >= 0; i-- {
		n := 1
		for j := i - 1; j >= 0; j-- {
			if d.sameAt(res, off+j, off+i) {
				n++
			}
		}
		if n > d.cfg.Dense {
			group := make([]Step, 0, n) // oldest first
			for j := range i {
				if d.sameAt(res, off+j, off+i) {
					group = append(group, last[j])
				}
			}
			group = append(group, last[i])
			s := last[i]
			ev := evidenceSpan(group, s)
			return Finding{Check: Dense, Status: "stuck", Step: res[len(res)-1].N, Key: string(Dense) + " " + s.key, Exact: allExact(ev),
				Diagnosis: fmt.Sprintf("the same call with the same result %d times in the last %d results: %s", len(group), len(last), words.Clip(s.key, 120)),
				Evidence:  ev}, true
		}
		if i < len(last)-1 {
			break // only groups that include a recent result matter
		}
	}
	return Finding{}, false
}

func lastN(s []Step, n int) []Step {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// evidence turns steps (newest first) into evidence, oldest first; a step
// byte-equal to ref is marked exact.
func evidence(run []Step, ref Step) []event.Evidence {
	out := make([]event.Evidence, 0, len(run))
	for i := len(run) - 1; i >= 0; i-- {
		out = append(out, evidenceOf(&run[i], &ref))
	}
	return out
}

// evidenceSpan is evidence over steps oldest first.
func evidenceSpan(run []Step, ref Step) []event.Evidence {
	out := make([]event.Evidence, 0, len(run))
	for i := range run {
		out = append(out, evidenceOf(&run[i], &ref))
	}
	return out
}

func evidenceOf(s, ref *Step) event.Evidence {
	return event.Evidence{Step: s.N, Kind: s.Kind, Tool: s.Tool, What: s.What,
		Exact: ref.exact != "" && s.exact == ref.exact && s.key == ref.key}
}

// liken records in s which of the last look results of the window (at
// most 64) are the same as s: bit k for the k-th before it. The checks
// then compare a result with those before it once, when it arrives,
// instead of again at every later result.
func (d *Detector) liken(s *Step, look int) {
	res, sigs, sig := d.rwin.s, d.rwin.sigs, sigOf(s)
	look = min(look, len(res), 64)
	s.like, s.likeN = 0, look
	for k := range look {
		// The packed signature first: most results differ there.
		if i := len(res) - 1 - k; sigs[i] == sig && d.same(&res[i], s) {
			s.like |= 1 << k
		}
	}
}

// sameAt reports whether the results res[i] and res[j], i < j, are the
// same (same), from res[j]'s record when it holds the answer.
func (d *Detector) sameAt(res []Step, i, j int) bool {
	if k := j - i - 1; k < res[j].likeN {
		return res[j].like>>k&1 == 1
	}
	return d.same(&res[i], &res[j])
}

func allExact(ev []event.Evidence) bool {
	for _, e := range ev {
		if !e.Exact {
			return false
		}
	}
	return len(ev) > 0
}

// String renders a finding on one line.
func (f Finding) String() string {
	return fmt.Sprintf("step %d: %s (%s): %s", f.Step, f.Check, f.Status, f.Diagnosis)
}
