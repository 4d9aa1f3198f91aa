package stuck

import (
	"encoding/json"
	"hash/maphash"
)

// Progress by state: the detector tracks what each file holds, as far as the
// observations tell, and the tree's state as a combination of them. A file
// change is progress only when it brings the tree to a state the task has
// not been in before: rewriting a file with the bytes it holds, or edits
// that take it back (A → B → A), are not.
//
// What a file holds comes from the observation's content sum when it has
// one (the native agent sums the files every call changed, a shell
// command's included), else from the call that changed it: write_file's
// content; an edit's old and new text (an edit that closes a chain of
// edits of the same text, undoing the last one or x → y → z → x, pops
// them, so the file is back where it was). A change the observations do
// not describe (a shell command without sums, a deletion) is a new state
// each time: it counts as progress.

// fileState is what one file holds: a base (0 for the content it had when
// the task began, else the hash of what was written or an opaque change)
// and the edits applied since, newest last, each with the state it led to
// (so undoing one, or applying one, costs the same whatever the history).
type fileState struct {
	base  uint64
	edits []editPair
}

type editPair struct{ old, new, sum uint64 }

// maxEdits bounds a file's edit history; past it the state so far becomes
// the base (an undo further back is then a new state, i.e. progress).
const maxEdits = 256

func (f *fileState) sum() uint64 {
	if len(f.edits) == 0 {
		return f.base
	}
	return f.edits[len(f.edits)-1].sum
}

func (f *fileState) set(base uint64) { f.base, f.edits = base, f.edits[:0] }

// maxChain bounds how far back apply looks for the start of a chain of
// edits that the new one closes.
const maxChain = 16

// apply records an edit old → new. An edit that closes a chain of edits of
// the same text (x → y, y → z, then z → x) takes the file back to the
// state before the chain began: the chain's edits are popped. Undoing the
// last edit (x → y, then y → x) is the shortest such chain.
func (f *fileState) apply(old, new uint64) {
	if old == new {
		return
	}
	if k := len(f.edits); k > 0 && f.edits[k-1].new == old {
		for i := k - 1; i >= max(0, k-maxChain); i-- {
			if f.edits[i].old == new {
				f.edits = f.edits[:i]
				return
			}
			if i == 0 || f.edits[i-1].new != f.edits[i].old {
				break // the chain is broken: an edit of other text
			}
		}
	}
	if len(f.edits) == maxEdits {
		f.set(f.sum())
	}
	f.edits = append(f.edits, editPair{old, new, mix(f.sum()^mix(old, 1), new)})
}

// tree is the task's files and the states the tree has been in.
type tree struct {
	seed   maphash.Seed
	files  map[string]*fileState
	sum    uint64         // XOR over the changed files of mix(path, state)
	epochs map[uint64]int // tree states seen, each with its epoch number
	opaque uint64         // counter for changes whose content is unknown
	next   int            // the last epoch number given
}

// maxStates bounds the tree states remembered; past it the oldest are
// forgotten all at once (a task that long has made progress).
const maxStates = 4096

func newTree() *tree {
	return &tree{seed: maphash.MakeSeed(), files: map[string]*fileState{}, epochs: map[uint64]int{0: 0}}
}

// changeArgs are the arguments of the file tools, native and CLI spellings.
type changeArgs struct {
	Content   *string `json:"content"`
	OldText   *string `json:"old_text"`
	NewText   *string `json:"new_text"`
	OldString *string `json:"old_string"`
	NewString *string `json:"new_string"`
}

// change applies one observed file change made by the call with args, and
// returns the tree's epoch after it and whether that state is new. sum,
// when the observation carries one (the native agent reads what every
// call, a shell command's included, left in the files it changed), is the
// file's content and overrides what the arguments tell.
func (t *tree) change(path, op string, args json.RawMessage, sum string) (epoch int, fresh bool) {
	f := t.files[path]
	if f == nil {
		f = &fileState{}
		t.files[path] = f
	}
	before := f.sum()
	var a changeArgs
	if op == "deleted" || len(args) == 0 || json.Unmarshal(args, &a) != nil {
		a = changeArgs{}
	}
	old, neu := a.OldText, a.NewText
	if old == nil {
		old, neu = a.OldString, a.NewString
	}
	switch {
	case op == "deleted":
		f.set(maphash.String(t.seed, "\x00deleted"))
	case sum != "":
		f.set(maphash.String(t.seed, "\x00sum\x00"+sum))
	case a.Content != nil:
		f.set(maphash.String(t.seed, *a.Content))
	case old != nil && neu != nil:
		f.apply(maphash.String(t.seed, *old), maphash.String(t.seed, *neu))
	default:
		t.opaque++
		f.set(mix(maphash.String(t.seed, "\x00opaque"), t.opaque))
	}
	after := f.sum()
	p := maphash.String(t.seed, path)
	if before != 0 {
		t.sum ^= mix(p, before)
	}
	if after != 0 {
		t.sum ^= mix(p, after)
	}
	if e, ok := t.epochs[t.sum]; ok {
		return e, false
	}
	if len(t.epochs) >= maxStates {
		clear(t.epochs)
	}
	t.next++
	t.epochs[t.sum] = t.next
	return t.next, true
}

// mix combines a path's hash and its state's (splitmix64 finalizer over
// their sum, so XOR over files does not cancel equal states of two files).
func mix(p, s uint64) uint64 {
	z := p + s*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
