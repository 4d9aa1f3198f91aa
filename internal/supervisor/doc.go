// Package supervisor is the runtime every supervisor runs on: the Watcher
// (internal/supervise), the Syncer (internal/syncer), the main watcher
// (internal/mainwatch), and later watcher sessions and the overlap radar.
//
// It provides, once, what each of them needs around its own logic:
//
//   - Run: the supervisor's loop, restarted after a panic (recovered,
//     logged, counted) or after its bus feed ends, with a pause (Backoff)
//     between, not in a spin; it returns when ctx ends, after the
//     background jobs are joined.
//   - Follow and Handled: the bus from a position. The first feed starts
//     live; a feed after a restart goes on after the last event the loop
//     said it handled, so nothing is missed or repeated.
//   - Go and Results: background jobs (model calls) in goroutines the
//     runtime owns and joins; a job's result is a function handed back to
//     the loop goroutine, which owns the supervisor's state.
//   - Safely: one handler's panic recovered, logged and counted; the loop
//     goes on.
//   - Ask, Degraded and Fallback: an internal persona asked one question
//     with a timeout, its reply parsed, and a deterministic fallback when
//     it fails, with the failures and the time spent degraded counted.
//   - Stats: the runtime's counters (running, started, restarts, panics)
//     for the supervisor's own stats.
//
// Concurrency: Run, Follow, Handled and the functions Results delivers run
// on the loop goroutine; Go, Safely, Stats and the Degraded methods are
// safe for concurrent use.
package supervisor
