// Package knowledge turns what agents say and do into learnings other tasks
// can use, and compares learnings so the same fact is kept once.
//
// It has two halves, both pure (no I/O, no goroutines, no package state):
//
//   - Text functions for the knowledge store. [Normalize] is the canonical
//     form of a learning's summary and [Fingerprint] its hash, for exact
//     deduplication through a unique index; [Terms] and [Similarity] find
//     the same fact phrased twice; [FTSQuery] builds an SQLite FTS5 MATCH
//     expression that is safe for any input.
//   - Extraction for the Syncer. An [Extractor] is fed every observation of
//     every running task (internal/event's agent.* payloads) and returns
//     [Candidate] learnings found by deterministic rules: an error that a
//     file change resolved, a search that located something, the agent's
//     own "turns out …" statements, and its explicit record_learning calls.
//     [Extractor.TurnDigest] is a compact transcript of a task's last turn
//     for an optional model pass, whose system prompt is [ModelPrompt] and
//     whose reply [ParseModelLearnings] reads.
//
// The rules favour precision: a missed learning costs little, a wrong one
// is relayed to other agents. Extraction knows the native agent's tool names
// (bash, read_file, write_file, edit_file, glob, grep) and the usual names
// of external CLIs (Bash, Read, Edit, Glob, Grep, run_shell_command, …),
// matched case-insensitively.
package knowledge
