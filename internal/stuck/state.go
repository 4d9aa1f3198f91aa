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
// What a file holds comes from the call that changed it: write_file's
// content; an edit's old and new text (an edit that undoes the last edit of
// the file, new → old, pops it, so the file is back where it was). A change
// the observations do not describe (a shell command, a deletion) is a new
// state each time: it counts as progress, as before.

// fileState is what one file holds: a base (0 for the content it had when
// the task began, else the hash of what was written or an opaque change)
// and the edits applied since, newest last.
type fileState struct {
	base  uint64
	edits []editPair
}

type editPair struct{ old, new uint64 }

func (f *fileState) sum(seed maphash.Seed) uint64 {
	if len(f.edits) == 0 {
		return f.base
	}
	var h maphash.Hash
	h.SetSeed(seed)
	var b [16]byte
	put := func(a, c uint64) {
		for i := range 8 {
			b[i], b[8+i] = byte(a>>(8*i)), byte(c>>(8*i))
		}
		h.Write(b[:])
	}
	put(f.base, uint64(len(f.edits)))
	for _, e := range f.edits {
		put(e.old, e.new)
	}
	return h.Sum64()
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
// returns the tree's epoch after it and whether that state is new.
func (t *tree) change(path, op string, args json.RawMessage) (epoch int, fresh bool) {
	f := t.files[path]
	if f == nil {
		f = &fileState{}
		t.files[path] = f
	}
	before := f.sum(t.seed)
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
		f.base, f.edits = maphash.String(t.seed, "\x00deleted"), f.edits[:0]
	case a.Content != nil:
		f.base, f.edits = maphash.String(t.seed, *a.Content), f.edits[:0]
	case old != nil && neu != nil:
		o, n := maphash.String(t.seed, *old), maphash.String(t.seed, *neu)
		switch {
		case o == n:
		case len(f.edits) > 0 && f.edits[len(f.edits)-1] == editPair{n, o}:
			f.edits = f.edits[:len(f.edits)-1]
		default:
			f.edits = append(f.edits, editPair{o, n})
		}
	default:
		t.opaque++
		f.base, f.edits = maphash.String(t.seed, "\x00opaque")^t.opaque, f.edits[:0]
	}
	after := f.sum(t.seed)
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
