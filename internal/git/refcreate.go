package git

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// RefCreator creates refs that must not exist yet (`git update-ref -m
// message ref commit ""`), gathering the ones asked for while a creation
// runs in the same repository into one transaction: one git process for
// the many branches of tasks started together instead of one each. No
// timer: the first creation runs at once, and the ones that arrive while
// it runs go together after it, so a lone creation never waits.
//
// A transaction is all or nothing: when it fails (one of its refs exists,
// a lock is held, it was cancelled), each of its refs is created again on
// its own, so each caller gets its own answer, as with one process each.
// The zero value is ready to use.
type RefCreator struct {
	mu      sync.Mutex
	pending map[createKey]*createGroup
	turns   map[string]chan struct{} // by repository: one transaction at a time

	txs  atomic.Int64 // transactions run, for tests
	held func()       // called by a transaction before it runs, in tests
}

// createKey gathers creations: one transaction has one directory and one
// reflog message.
type createKey struct{ dir, message string }

// createGroup is the creations of one transaction.
type createGroup struct {
	refs, commits []string
	done          chan struct{}
	err           error // valid once done is closed
}

// Create creates ref at commit in the repository at dir, with message as
// its reflog entry, only if ref does not exist.
func (c *RefCreator) Create(ctx context.Context, dir, message, ref, commit string) error {
	if ref == "" || commit == "" || strings.ContainsAny(ref+commit, " \n\x00") || strings.Contains(message, "\n") {
		return fmt.Errorf("creating a ref: bad ref %q or commit %q", ref, commit)
	}
	// A caller inside Locked runs its creation alone with its own context
	// (which takes no lock again): gathered behind another caller's
	// transaction, which takes the repository's lock, it could wait for a
	// command that itself waits for the lock this caller holds.
	if d, err := locate(ctx, dir); err == nil && holds(ctx, d.Common) {
		_, err := Run(ctx, dir, "update-ref", "-m", message, ref, commit, "")
		return err
	}
	k := createKey{dir, message}
	c.mu.Lock()
	if c.pending == nil {
		c.pending, c.turns = map[createKey]*createGroup{}, map[string]chan struct{}{}
	}
	g := c.pending[k]
	lead := g == nil
	if lead {
		g = &createGroup{done: make(chan struct{})}
		c.pending[k] = g
	}
	g.refs, g.commits = append(g.refs, ref), append(g.commits, commit)
	turn := c.turns[dir]
	if turn == nil {
		turn = make(chan struct{}, 1)
		c.turns[dir] = turn
	}
	c.mu.Unlock()
	if lead {
		c.run(ctx, k, g, turn)
	} else {
		// The leader's transaction ends whatever this caller's context
		// says: its outcome (the ref made or not) is what is answered.
		<-g.done
	}
	if g.err == nil {
		return nil
	}
	if len(g.refs) == 1 {
		return g.err
	}
	_, err := Run(ctx, dir, "update-ref", "-m", message, ref, commit, "")
	return err
}

// run waits for the repository's turn, takes the group out of the ones
// still gathering, and creates its refs in one transaction.
func (c *RefCreator) run(ctx context.Context, k createKey, g *createGroup, turn chan struct{}) {
	defer close(g.done)
	detach := func() {
		c.mu.Lock()
		if c.pending[k] == g {
			delete(c.pending, k) // later arrivals form the next group
		}
		c.mu.Unlock()
	}
	select {
	case turn <- struct{}{}:
	case <-ctx.Done():
		detach()
		g.err = ctx.Err()
		return
	}
	defer func() { <-turn }()
	detach()
	c.txs.Add(1)
	if c.held != nil {
		c.held()
	}
	if len(g.refs) == 1 {
		_, g.err = Run(ctx, k.dir, "update-ref", "-m", k.message, g.refs[0], g.commits[0], "")
		return
	}
	var b strings.Builder
	b.WriteString("start\n")
	for i, ref := range g.refs {
		// An empty old value: the ref must not exist.
		b.WriteString("create " + ref + " " + g.commits[i] + "\n")
	}
	b.WriteString("prepare\ncommit\n")
	_, g.err = runInput(ctx, k.dir, nil, b.String(), "update-ref", "-m", k.message, "--stdin")
}
