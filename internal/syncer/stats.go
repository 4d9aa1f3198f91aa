package syncer

import "time"

// Stats are the Syncer's counters since it was built.
type Stats struct {
	Enabled      bool
	Running      bool
	LastSweep    time.Time
	Sweeps       uint64
	Observations uint64
	// Learnings counts learnings stored by kind (merged ones included);
	// Merged those that joined a known learning.
	Learnings map[string]uint64
	Merged    uint64
	Evaluated uint64
	Sent      uint64
	Held      uint64
	Delivered uint64
	// Ignored counts relays not made, by reason.
	Ignored map[string]uint64
	Briefed uint64 // new tasks given learnings in their first context
	// PersonaCalls, PersonaFailures: the syncer persona's decisions, and
	// those that failed or replied unusably (the deterministic rules
	// decided instead: degraded). ExtractCalls: the turn-end model pass.
	PersonaCalls    uint64
	PersonaFailures uint64
	ExtractCalls    uint64
	ExtractFailures uint64
	ModelTokens     int64
	ModelUSD        float64
	Degraded        bool
	DegradedReason  string
	// Panics counts handlers and model calls that panicked (recovered;
	// the loop went on); Restarts counts restarts of the loop itself.
	Panics   uint64
	Restarts uint64
}
