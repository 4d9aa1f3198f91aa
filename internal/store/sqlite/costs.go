package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/store"
)

// charge adds c to the cost ledger.
func (w *wtx) charge(c store.Charge) error {
	if _, err := w.exec(`INSERT INTO costs (task_id, at, provider, model, input_tokens, output_tokens,
		cache_read_tokens, cache_write_tokens, cost_usd, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(c.TaskID), c.At.UnixNano(), c.Provider, c.Model, c.InputTokens, c.OutputTokens,
		c.CacheReadTokens, c.CacheWriteTokens, c.CostUSD, c.DurationMs); err != nil {
		return fmt.Errorf("recording a charge of %s/%s: %w", c.Provider, c.Model, err)
	}
	return nil
}

// costKey returns the SQL expression of the group key for CostQuery.By.
func costKey(by string) (string, error) {
	switch by {
	case "":
		return `'total'`, nil
	case "day":
		// at is UnixNano; date() of a unix time is the UTC date.
		return `date(at / 1000000000, 'unixepoch')`, nil
	case "task":
		return `task_id`, nil
	case "model":
		return `provider || '/' || model`, nil
	case "watcher":
		return `watcher`, nil
	}
	return "", fmt.Errorf("summarizing costs: unknown grouping %q: use day, task, model, watcher or nothing", by)
}

// Costs implements store.Store.
func (s *Store) Costs(ctx context.Context, q store.CostQuery) ([]store.CostRow, error) {
	key, err := costKey(q.By)
	if err != nil {
		return nil, err
	}
	var (
		where []string
		args  []any
	)
	if q.TaskID != "" {
		where = append(where, "task_id = ?")
		args = append(args, string(q.TaskID))
	}
	if q.By == "watcher" {
		where = append(where, "watcher <> ''")
	}
	if !q.Since.IsZero() {
		where = append(where, "at >= ?")
		args = append(args, q.Since.UnixNano())
	}
	if q.AfterID > 0 {
		// A range of the primary key: only the newer charges are read.
		where = append(where, "id > ?")
		args = append(args, q.AfterID)
	}
	// TOTAL, unlike SUM, is 0.0 over no rows and always a float.
	query := `SELECT ` + key + `, COUNT(*), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0),
		COALESCE(SUM(cache_read_tokens), 0), COALESCE(SUM(cache_write_tokens), 0), TOTAL(cost_usd), COALESCE(MAX(id), 0) FROM costs`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	// Without GROUP BY an aggregate yields exactly one row, even over no
	// charges: the "total" row always exists.
	if q.By != "" {
		query += " GROUP BY 1 ORDER BY 1"
	}
	rows, err := s.reads.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("summarizing costs: %w", err)
	}
	defer rows.Close()
	var out []store.CostRow
	for rows.Next() {
		var r store.CostRow
		if err := rows.Scan(&r.Key, &r.Calls, &r.InputTokens, &r.OutputTokens, &r.CacheReadTokens, &r.CacheWriteTokens, &r.CostUSD, &r.LastID); err != nil {
			return nil, fmt.Errorf("summarizing costs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("summarizing costs: %w", err)
	}
	return out, nil
}

// Spent implements store.Store. The index on (at, cost_usd) covers the
// query: it reads only the index entries of the charges since the given time.
func (s *Store) Spent(ctx context.Context, since time.Time) (float64, error) {
	query, args := `SELECT TOTAL(cost_usd) FROM costs`, []any(nil)
	if !since.IsZero() {
		query += ` WHERE at >= ?`
		args = append(args, since.UnixNano())
	}
	var usd float64
	if err := s.reads.QueryRowContext(ctx, query, args...).Scan(&usd); err != nil {
		return 0, fmt.Errorf("summing costs: %w", err)
	}
	return usd, nil
}
