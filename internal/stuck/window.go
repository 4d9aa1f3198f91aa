package stuck

import "encoding/json"

// fileChange is a file changed after step n.
type fileChange struct {
	n    int
	path string
}

// fileReturn is a file change after step n that took the tree back to the
// state of an earlier epoch.
type fileReturn struct {
	n     int
	path  string
	epoch int
}

// pendingCall is a tool call waiting for its result.
type pendingCall struct {
	key  string
	kw   uint64
	args json.RawMessage // kept for the file it may change
	read bool            // a read: a file tool that only looks, or a reading command
}

// pendingEntry is a pending call under its call id.
type pendingEntry struct {
	id string
	c  pendingCall
}

// putPending records the call id waits for (replacing one of the same id).
func (d *Detector) putPending(id string, c pendingCall) {
	for i := range d.pending {
		if d.pending[i].id == id {
			d.pending[i].c = c
			return
		}
	}
	d.pending = append(d.pending, pendingEntry{id, c})
}

// takePending returns and forgets the call id waits for.
func (d *Detector) takePending(id string) (pendingCall, bool) {
	for i := range d.pending {
		if d.pending[i].id == id {
			c := d.pending[i].c
			last := len(d.pending) - 1
			d.pending[i] = d.pending[last]
			d.pending[last] = pendingEntry{} // let its strings go
			d.pending = d.pending[:last]
			return c, true
		}
	}
	return pendingCall{}, false
}

// clearPending forgets every pending call.
func (d *Detector) clearPending() {
	clear(d.pending)
	d.pending = d.pending[:0]
}

// push appends a step to the window, dropping the oldest when it is full;
// the results' window follows.
func (d *Detector) push(s Step) {
	s.Epoch = d.epoch
	if old := d.win.push(&s, d.cfg.Window); old == "result" {
		d.rwin.dropFront()
	}
	if s.Kind == "result" {
		d.rwin.push(&s, d.cfg.Window)
	}
	d.steps = d.win.s
}

// window is a queue of steps, oldest first: a view of a buffer twice its
// size, so dropping the oldest step moves the view and the steps are copied
// back to the buffer's start only once per size pushes. sig holds, step for
// step, what same compares first, packed: a scan for equal results reads
// it instead of the steps (a few hundred bytes each).
type window struct {
	buf, s       []Step
	sigBuf, sigs []stepSig
}

// stepSig is what two steps must share to be the same (see same).
type stepSig struct {
	kw    uint64
	epoch int
	err   bool
}

func sigOf(s *Step) stepSig { return stepSig{kw: s.kw, epoch: s.Epoch, err: s.Error} }

// push appends a copy of st, dropping the oldest step when n are held; it
// returns the dropped step's Kind ("" when none was).
func (w *window) push(st *Step, n int) (dropped string) {
	if w.buf == nil {
		w.buf = make([]Step, 0, 2*n)
		w.s = w.buf[:0]
		w.sigBuf = make([]stepSig, 0, 2*n)
		w.sigs = w.sigBuf[:0]
	}
	if len(w.s) >= n {
		dropped = w.s[0].Kind
		w.s = w.s[1:]
		w.sigs = w.sigs[1:]
	}
	if len(w.s) == cap(w.s) {
		k := copy(w.buf[:cap(w.buf)], w.s)
		clear(w.buf[k:cap(w.buf)]) // let the dropped steps' strings go
		w.s = w.buf[:k]
		w.sigs = w.sigBuf[:copy(w.sigBuf[:cap(w.sigBuf)], w.sigs)]
	}
	w.s = append(w.s, *st)
	w.sigs = append(w.sigs, sigOf(st))
	return dropped
}

func (w *window) dropFront() {
	if len(w.s) > 0 {
		w.s = w.s[1:]
		w.sigs = w.sigs[1:]
	}
}

func (w *window) reset() { w.s, w.sigs = w.buf[:0], w.sigBuf[:0] }
