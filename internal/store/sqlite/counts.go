package sqlite

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
