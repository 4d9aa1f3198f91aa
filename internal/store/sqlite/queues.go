package sqlite

import (
	"sync"
	"sync/atomic"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// A run reads its task's queue at every turn boundary, and the queue is
// almost always empty. The writer counts the batches that wrote the
// injections table (queueCache.gen, bumped after the commit and before any
// caller hears of it, as listCache does); a queue read empty is remembered
// with the count read before its query, and Pending answers "empty" without
// a query while the count has not moved. Any write of any injection makes
// every queue be read again.
type queueCache struct {
	gen atomic.Uint64

	mu    sync.Mutex
	empty map[task.ID]uint64 // the generation a task's queue was read empty at

	// writes memoizes statementWrites(q, "INJECTIONS"); owned by the writer
	// goroutine.
	writes map[string]bool
}

// maxEmptyQueues bounds the queues remembered empty: about one per
// running task.
const maxEmptyQueues = 16384

// isEmpty reports whether id's queue was read empty at generation gen.
func (c *queueCache) isEmpty(id task.ID, gen uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.empty[id]
	return ok && g == gen
}

// readEmpty remembers id's queue read empty at generation gen, unless the
// injections changed since.
func (c *queueCache) readEmpty(id task.ID, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen.Load() {
		return
	}
	if c.empty == nil || len(c.empty) >= maxEmptyQueues {
		c.empty = make(map[task.ID]uint64)
	}
	c.empty[id] = gen
}

// wrote records a committed (or failed) batch that wrote injections.
func (c *queueCache) wrote() {
	c.gen.Add(1)
	c.mu.Lock()
	clear(c.empty)
	c.mu.Unlock()
}

// writesInjections reports whether statement q may change the injections
// table.
func (c *queueCache) writesInjections(q string) bool {
	w, ok := c.writes[q]
	if !ok {
		w = statementWrites(q, "INJECTIONS")
		if c.writes == nil {
			c.writes = map[string]bool{}
		}
		c.writes[q] = w
	}
	return w
}
