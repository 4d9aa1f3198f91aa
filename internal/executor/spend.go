package executor

import (
	"fmt"
	"sync"
	"time"
)

// spend keeps the fleet's spending in memory, so budgets are checked before
// every model call without reading the ledger: it starts from the ledger
// and adds every charge the executor commits.
type spend struct {
	mu    sync.Mutex
	total float64
	day   time.Time // start of the UTC day today counts
	today float64
}

func (s *spend) add(at time.Time, usd float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += usd
	if d := dayStart(at); !d.Equal(s.day) {
		if d.Before(s.day) {
			return
		}
		s.day, s.today = d, 0
	}
	s.today += usd
}

// over returns why the fleet may not spend more now, or "".
func (s *spend) over(cfg Config, now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := dayStart(now); d.After(s.day) {
		s.day, s.today = d, 0
	}
	switch {
	case cfg.FleetUSD > 0 && s.total >= cfg.FleetUSD:
		return fmt.Sprintf(sharedBudgetPrefix+"fleet budget of $%.2f is spent ($%.4f); raise budget.fleet_usd", cfg.FleetUSD, s.total)
	case cfg.DailyUSD > 0 && s.today >= cfg.DailyUSD:
		return fmt.Sprintf(sharedBudgetPrefix+"daily budget of $%.2f is spent ($%.4f today); raise budget.daily_usd or wait for the next UTC day", cfg.DailyUSD, s.today)
	}
	return ""
}
