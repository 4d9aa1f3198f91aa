package sqlite

import (
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// maxKept bounds the writer's decoded tasks: about one per running task.
const maxKept = 4096

// keptTask is a task as the writer last wrote or decoded it, with the
// stored JSON it equals. The database stays the one home of a task: a kept
// task is used only while the stored bytes are the very bytes it was kept
// with, so any other write, a rolled-back batch or a change from outside
// the writer makes it a miss and the task is decoded again.
type keptTask struct {
	data string
	t    task.Task
}

// readTaskKept is readTask for the run's checkpoints, which write the same
// task at every turn: it reads the stored JSON and decodes it only when it
// is not what the writer kept for the task. Nothing of the task returned
// is shared with the kept one: with change (the caller will change and
// write it, then keepTask) the kept task is handed over and leaves the
// map, else a copy is returned.
//
// It returns the length of the task's conversation too (conversationLen),
// read in the same statement.
func (w *wtx) readTaskKept(id task.ID, change bool) (task.Task, int, error) {
	var (
		data []byte
		n    int
	)
	err := w.queryRow(`SELECT data, (SELECT COALESCE(MAX(seq) + 1, 0) FROM conversation_entries WHERE task_id = ?1)
		FROM tasks WHERE id = ?1`, string(id)).Scan(&data, &n)
	if isNoRows(err) {
		return task.Task{}, 0, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return task.Task{}, 0, fmt.Errorf("reading task %s: %w", id, err)
	}
	t, err := w.keptOrDecoded(id, data, change)
	return t, n, err
}

// keptOrDecoded is the task stored as data: the kept one when it was kept
// as data, else decoded (and kept).
func (w *wtx) keptOrDecoded(id task.ID, data []byte, change bool) (task.Task, error) {
	if k, ok := w.s.kept[id]; ok {
		if k.data == string(data) {
			w.s.keptHits++
			if !change {
				return cloneTask(k.t), nil
			}
			delete(w.s.kept, id)
			return k.t, nil
		}
		delete(w.s.kept, id)
	}
	w.s.keptMisses++
	t, err := decodeTask(data)
	if err != nil {
		return task.Task{}, fmt.Errorf("reading task %s: %w", id, err)
	}
	w.keepTask(t, string(data))
	return t, nil
}

// keepTask keeps a copy of t, just written (or read) as data, for the
// next readTaskKept, unless t has finished or could decode otherwise than
// it is (see faithful).
func (w *wtx) keepTask(t task.Task, data string) {
	if t.Status.Terminal() || !faithful(&t) {
		delete(w.s.kept, t.ID)
		return
	}
	if w.s.kept == nil || len(w.s.kept) >= maxKept {
		w.s.kept = make(map[task.ID]keptTask)
	}
	c := cloneTask(t)
	for _, p := range []*time.Time{&c.CreatedAt, &c.UpdatedAt, c.StartedAt, c.FinishedAt} {
		if p != nil {
			*p = p.UTC().Round(0) // as decoded: UTC (faithful saw offset 0), no monotonic reading
		}
	}
	w.s.kept[t.ID] = keptTask{data: data, t: c}
}

// faithful reports whether decoding t's JSON gives t back: its strings are
// valid UTF-8 (encoding replaces invalid bytes) and its times have the
// offset 0, which decodes as UTC (another offset decodes to a zone keepTask
// does not rebuild).
func faithful(t *task.Task) bool {
	ok := func(ss ...string) bool {
		for _, s := range ss {
			if !utf8.ValidString(s) {
				return false
			}
		}
		return true
	}
	if !ok(string(t.ID), t.Description, t.Context, string(t.ParentID), t.Persona, t.PersonaVia, t.Engine,
		t.Model, t.Repo, t.Branch, t.Worktree, string(t.Status), t.CloseReason) || !ok(t.Tags...) {
		return false
	}
	for _, p := range t.Workflow {
		if !ok(p.Name, p.Instructions) || !ok(p.Personas...) {
			return false
		}
	}
	if p := t.Phase; p != nil && !ok(p.Name) {
		return false
	}
	if m := t.Manifest; m != nil {
		if !ok(string(m.Complexity), m.Source, m.Note) || !ok(m.Readable...) || !ok(m.Writable...) ||
			!ok(m.Tools...) || !ok(m.Commands...) || !ok(m.Env...) || !ok(m.Secrets...) {
			return false
		}
		if g := m.Pending; g != nil && !ok(g.Tool, g.Writable, g.Readable, g.Command) {
			return false
		}
	}
	for _, tm := range []*time.Time{&t.CreatedAt, &t.UpdatedAt, t.StartedAt, t.FinishedAt} {
		if tm == nil {
			continue
		}
		if _, off := tm.Zone(); off != 0 {
			return false
		}
	}
	return true
}

// cloneTask copies t deeply: nothing of the copy is shared with t.
func cloneTask(t task.Task) task.Task {
	t.Tags = slices.Clone(t.Tags)
	if t.Workflow != nil {
		t.Workflow = slices.Clone(t.Workflow)
		for i := range t.Workflow {
			t.Workflow[i].Personas = slices.Clone(t.Workflow[i].Personas)
		}
	}
	if t.Phase != nil {
		p := *t.Phase
		t.Phase = &p
	}
	if t.Manifest != nil {
		m := *t.Manifest
		m.Readable, m.Writable, m.Tools = slices.Clone(m.Readable), slices.Clone(m.Writable), slices.Clone(m.Tools)
		m.Commands, m.Env, m.Secrets = slices.Clone(m.Commands), slices.Clone(m.Env), slices.Clone(m.Secrets)
		if m.Pending != nil {
			g := *m.Pending
			m.Pending = &g
		}
		t.Manifest = &m
	}
	if t.StartedAt != nil {
		s := *t.StartedAt
		t.StartedAt = &s
	}
	if t.FinishedAt != nil {
		f := *t.FinishedAt
		t.FinishedAt = &f
	}
	return t
}
