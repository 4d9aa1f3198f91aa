package sqlite

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/neuraphage/neuraphage-go/internal/store"
)

// eventTally is the event log's row count and highest ID, as the writer
// tracks them through a batch: Counts reads them instead of counting the
// log, a scan of every row that grew with it.
type eventTally struct {
	rows, last int64
}

// add counts a committed operation's effect on the log: its deletions
// (the log recounted after them) and then its appended events, whose IDs
// ascend.
func (t *eventTally) add(w *wtx) {
	if w.recount != nil {
		*t = *w.recount
	}
	if n := len(w.events); n > 0 {
		t.rows += int64(n)
		t.last = w.events[n-1].ID
	}
}

// countCache keeps Counts' task counts by status and pending injections
// while no write could have changed them. Every status poll asks for them
// (`daemon status`, the dashboard, dev load's sampler every 20 ms) and
// grouping 10,000 tasks by status took most of a millisecond, while almost
// every write of a task (a turn's checkpoint) keeps its status. The writer
// bumps statusGen after a batch that ran a statement that may change a
// task's status (any write of tasks but updateTaskBodySQL, which leaves the
// column out), before any caller hears of it; the injections' generation
// is the queue cache's. Counts read at a pair of generations are served
// while both stay.
type countCache struct {
	statusGen atomic.Uint64

	mu   sync.Mutex
	key  countKey
	ok   bool
	kept store.Counts
}

type countKey struct{ status, queues uint64 }

// get returns a copy of the counts read at key.
func (c *countCache) get(key countKey) (store.Counts, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || c.key != key {
		return store.Counts{}, false
	}
	out := c.kept
	out.Tasks = maps.Clone(c.kept.Tasks)
	return out, true
}

// put keeps counts read at key (taken before the queries: counts that
// raced a write are kept under a key no later read has).
func (c *countCache) put(key countKey, counts store.Counts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.key, c.ok = key, true
	c.kept = counts
	c.kept.Tasks = maps.Clone(counts.Tasks)
}
