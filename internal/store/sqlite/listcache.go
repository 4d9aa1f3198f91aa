package sqlite

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/neuraphage/neuraphage-go/internal/store"
)

// A whole listing of 10,000 tasks is megabytes read from SQLite; a listing
// asked for again while no task changed is served from memory. The writer
// counts the batches that wrote the tasks table (listCache.gen, bumped after
// the commit); a listing is kept with the count read before its query, so
// one that raced a write is never served again.
type listCache struct {
	gen atomic.Uint64

	mu      sync.Mutex
	entries []cachedListing // newest last, all of one generation

	// writes memoizes writesTasks per statement; owned by the writer
	// goroutine.
	writes map[string]bool
}

// maxCachedListings bounds the listings kept (each one a whole listing).
const maxCachedListings = 2

type cachedListing struct {
	gen  uint64
	key  string
	page store.SummaryPage
}

// listingKey identifies a whole listing's options.
func listingKey(opts store.ListOptions) string {
	var b strings.Builder
	for _, st := range opts.Statuses {
		b.WriteString(string(st))
		b.WriteByte(',')
	}
	b.WriteByte(0)
	b.WriteString(string(opts.ParentID))
	b.WriteByte(0)
	b.WriteString(string(opts.After))
	return b.String()
}

// get returns the listing kept for key at generation gen.
func (c *listCache) get(key string, gen uint64) (store.SummaryPage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.gen == gen && e.key == key {
			return e.page, true
		}
	}
	return store.SummaryPage{}, false
}

// put keeps a listing read at generation gen, unless the tasks changed
// since.
func (c *listCache) put(key string, gen uint64, p store.SummaryPage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen.Load() {
		return
	}
	c.entries = slices.DeleteFunc(c.entries, func(e cachedListing) bool { return e.gen != gen || e.key == key })
	if len(c.entries) == maxCachedListings {
		c.entries = slices.Delete(c.entries, 0, 1)
	}
	p.JSON = slices.Clip(p.JSON) // shared: an append copies
	c.entries = append(c.entries, cachedListing{gen: gen, key: key, page: p})
}

// wrote records a committed batch that wrote the tasks table.
func (c *listCache) wrote() {
	c.gen.Add(1)
	c.mu.Lock()
	c.entries = nil
	c.mu.Unlock()
}

// writesTasks reports whether statement q may change the tasks table: an
// INSERT, REPLACE, UPDATE or DELETE whose table is tasks.
func (c *listCache) writesTasks(q string) bool {
	w, ok := c.writes[q]
	if !ok {
		w = statementWritesTasks(q)
		if c.writes == nil {
			c.writes = map[string]bool{}
		}
		c.writes[q] = w
	}
	return w
}

func statementWritesTasks(q string) bool { return statementWrites(q, "TASKS") }

// statementWrites reports whether statement q may change table (upper
// case): an INSERT, REPLACE, UPDATE or DELETE whose table it is.
func statementWrites(q, table string) bool {
	toks := strings.FieldsFunc(strings.ToUpper(q), func(r rune) bool {
		return r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '('
	})
	if len(toks) == 0 {
		return false
	}
	switch toks[0] {
	case "INSERT", "REPLACE", "UPDATE", "DELETE":
	default:
		return false
	}
	for i := 1; i < len(toks); i++ {
		switch toks[i] {
		case "OR":
			i++ // OR IGNORE, OR REPLACE, ...
		case "INTO", "FROM":
		default:
			return toks[i] == table
		}
	}
	return false
}
