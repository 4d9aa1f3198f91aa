package git

// SetHeld makes every transaction of c call f before it runs.
func (c *RefCreator) SetHeld(f func()) { c.held = f }

// Transactions counts the transactions c ran.
func (c *RefCreator) Transactions() int64 { return c.txs.Load() }

// Gathering counts the creations waiting to go together in dir with message.
func (c *RefCreator) Gathering(dir, message string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.pending[createKey{dir, message}]; g != nil {
		return len(g.refs)
	}
	return 0
}
