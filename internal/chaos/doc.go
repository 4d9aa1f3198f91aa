// Package chaos is the crash test of the whole daemon: its only code is a
// test, behind the build tag chaos, that builds the neuraphage binary, runs
// a real daemon as a child process against the scripted model server with
// many tasks in one real git repository, kills the daemon with SIGKILL at
// seeded random moments, restarts it, and then checks that no task, message,
// commit or file was lost or doubled and that no process or worktree was
// left behind. Run it with
//
//	go test -tags chaos -v -run TestChaos ./internal/chaos/ [-chaos.seed N] [-chaos.duration 60s]
//
// (docs/recovery.md, "The chaos test").
package chaos
