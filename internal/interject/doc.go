// Package interject is the pure part of watcher sessions: what a session
// sees of the task it watches (Buffer: the task's activity since the
// session's last evaluation, truncated, and whether it has reached a
// breakpoint), the evaluation prompt it asks its model (Prompt), and the
// parser of the model's reply (Parse: an [INTERJECT] block or a
// [CONTINUE] note). It does no I/O; internal/watchers runs the sessions.
//
// Task-controlled text never shapes the prompt: it is escaped (&lt; &gt;
// &amp;, and the brackets of block markers) inside task-data elements, so
// a file that contains "[/INTERJECT]" or "RECENT ACTIVITY" cannot forge a
// block or a heading. Only the reply is parsed, never the prompt.
package interject
