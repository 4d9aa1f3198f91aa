// Package lifecycle is seed 003's lifecycle around an engine, shared by
// every engine (the native loop and the external agent CLIs):
//
//   - Evaluate: a task's sandbox manifest (task.Manifest) from deterministic
//     rules (Default) plus an optional router-tier pass (Evaluator), always
//     clamped to the user's policy (Clamp); mapped onto the sandbox
//     (NarrowSandbox) and onto each CLI's flags (FlagMapper, ClaudeFlags).
//   - Monitor: a run's progress from its observations (Progress) and the
//     timers that stop a silent or overlong run (Watchdog).
//   - Recover: a permission denial judged, a fix computed within the
//     policy, and the strategy's decision (Recoverer).
//   - Report: the markdown summary of a finished task (Report, Markdown).
//
// Everything but Report's git reads is pure; the executor and the engines
// call it.
package lifecycle

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Policy is the user's sandbox policy as far as manifests go: the bounds
// no manifest leaves, whatever evaluates or widens it.
type Policy struct {
	// Tools are the tools a manifest may hold at most (sandbox.tools).
	Tools []string
	// Write are the absolute paths outside the worktree a manifest may
	// make writable (sandbox.write).
	Write []string
	// DenyRead are the absolute paths no manifest may make readable.
	DenyRead []string
	// IdleSecs and TotalSecs are a medium task's timeouts (0: none).
	IdleSecs, TotalSecs int
	// Recovery is the strategy for permission denials; MaxEscalations
	// caps the moderate one.
	Recovery       Strategy
	MaxEscalations int
}

// PolicyFrom reads the policy from the sandbox section, with ~/ expanded
// against home; denyRead are the paths the daemon denies besides the
// configured ones (~/.ssh, its own data).
func PolicyFrom(c config.Sandbox, home string, denyRead []string) Policy {
	return Policy{
		Tools:          slices.Clone(c.Tools),
		Write:          config.ExpandHome(c.Write, home),
		DenyRead:       append(config.ExpandHome(c.DenyRead, home), denyRead...),
		IdleSecs:       c.IdleTimeoutSecs,
		TotalSecs:      c.TotalTimeoutSecs,
		Recovery:       Strategy(c.Recovery),
		MaxEscalations: c.MaxEscalations,
	}
}

// readOnlyTools are the tools a reviewing task gets: it reads and runs
// checks, and changes nothing.
var readOnlyTools = []string{"Read", "Glob", "Grep", "Bash"}

// Default is the deterministic manifest of t under p: the whole worktree
// readable and writable, the policy's tools (a reviewer's read-only ones),
// the environment names given, the secrets its description names, and
// the complexity its description and persona suggest, with its timeouts.
func Default(t task.Task, p Policy, env []string) task.Manifest {
	tools := slices.Clone(p.Tools)
	if t.Persona == "reviewer" || (t.Phase != nil && t.Phase.Review) {
		tools = slices.DeleteFunc(tools, func(s string) bool { return !slices.Contains(readOnlyTools, s) })
	}
	m := task.Manifest{
		Readable:   []string{"."},
		Writable:   []string{"."},
		Tools:      tools,
		Env:        envNames(env),
		Secrets:    SecretRefs(t.Description + "\n" + t.Context),
		Complexity: Assess(t),
		Source:     "default",
	}
	m.IdleTimeoutSecs, m.TotalTimeoutSecs = Timeouts(m.Complexity, p)
	return m
}

// Current is t's stored manifest, or Default under p when it has none
// (a task that started before manifests, or a run the executor gave
// none): what an engine maps onto its CLI.
func Current(t task.Task, p Policy) task.Manifest {
	if t.Manifest != nil {
		return *t.Manifest
	}
	return Default(t, p, nil)
}

// Timeouts are the idle and total timeouts of a task of complexity c: the
// policy's for medium, half for low, twice for high.
func Timeouts(c task.Complexity, p Policy) (idle, total int) {
	half := func(n int) int {
		if n > 0 {
			return max(1, n/2) // a limit halved stays a limit
		}
		return 0
	}
	switch c {
	case task.Low:
		return half(p.IdleSecs), half(p.TotalSecs)
	case task.High:
		return p.IdleSecs * 2, p.TotalSecs * 2
	}
	return p.IdleSecs, p.TotalSecs
}

var (
	highWords = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(refactor\w*|migrat\w*|architect\w*|redesign\w*|rewrite|rewriting|overhaul\w*|concurren\w*|race condition|across the (code|repo)\w*)\b`)
	})
	lowWords = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(typo\w*|rename\w*|comment\w*|readme|docstring\w*|bump|spelling|wording|format(ting)?)\b`)
	})
)

// Assess is the deterministic complexity of t: high for a long
// description, a word of large change (refactor, migrate, redesign, …) or
// the architect persona; low for a short one about a small change (typo,
// rename, comment, …) or the junior persona; medium otherwise.
func Assess(t task.Task) task.Complexity {
	text := t.Description + "\n" + t.Context
	switch {
	case len(text) > 1500, highWords().MatchString(text), t.Persona == "architect":
		return task.High
	case len(text) < 300 && lowWords().MatchString(text), t.Persona == "junior":
		return task.Low
	}
	return task.Medium
}

var secretRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$?\b([A-Z][A-Z0-9_]*_(?:TOKEN|KEY|SECRET|PASSWORD|PASS|CREDENTIALS?))\b`)
})

// SecretRefs returns the names of the secrets text refers to: upper-case
// variable names ending in _TOKEN, _KEY, _SECRET, _PASSWORD, … Only names
// are kept, never a value.
func SecretRefs(text string) []string {
	var out []string
	for _, m := range secretRef().FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// envNames returns the names of NAME=value pairs (or bare names).
func envNames(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if validName(name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`) })

func validName(s string) bool { return nameRE().MatchString(s) }

// Limits of a manifest's lists, so that a model's reply cannot make one
// huge.
const (
	maxEntries    = 64
	maxCommandLen = 200
)

// Clamp returns m within p: tools the policy does not allow dropped;
// paths that leave the worktree ("..") dropped; absolute writable paths
// only within p.Write, absolute readable ones never under p.DenyRead;
// commands, environment and secret names checked; every list deduplicated
// and capped; the timeouts at most the high-complexity ones of p (a
// manifest may shorten its timeouts, never lengthen them past the
// policy). It reports what it dropped.
func Clamp(m task.Manifest, p Policy) (task.Manifest, []string) {
	var dropped []string
	drop := func(what string) { dropped = append(dropped, what) }
	out := m
	out.Tools = keep(m.Tools, func(s string) bool { return slices.Contains(p.Tools, s) }, "tool ", drop)
	out.Writable = keep(m.Writable, func(s string) bool { return pathAllowed(s, p.Write, nil) }, "writable ", drop)
	out.Readable = keep(m.Readable, func(s string) bool { return pathAllowed(s, nil, p.DenyRead) }, "readable ", drop)
	out.Commands = keep(m.Commands, validCommand, "command ", drop)
	out.Env = keep(m.Env, validName, "env ", drop)
	out.Secrets = keep(m.Secrets, validName, "secret ", drop)
	for i, s := range out.Writable {
		out.Writable[i] = cleanPath(s)
	}
	for i, s := range out.Readable {
		out.Readable[i] = cleanPath(s)
	}
	if !out.Complexity.Valid() {
		drop("complexity " + string(out.Complexity))
		out.Complexity = task.Medium
	}
	maxIdle, maxTotal := Timeouts(task.High, p)
	out.IdleTimeoutSecs = clampSecs(out.IdleTimeoutSecs, maxIdle)
	out.TotalTimeoutSecs = clampSecs(out.TotalTimeoutSecs, maxTotal)
	return out, dropped
}

// clampSecs keeps v within [0, max]; a policy without the limit (max 0)
// lets the manifest have any.
func clampSecs(v, limit int) int {
	switch {
	case v < 0:
		return 0
	case limit > 0 && (v == 0 || v > limit):
		return limit
	}
	return v
}

// keep returns the entries of list ok accepts, deduplicated and capped,
// reporting the others.
func keep(list []string, ok func(string) bool, label string, drop func(string)) []string {
	out := []string{}
	for _, s := range list {
		s = strings.TrimSpace(s)
		switch {
		case slices.Contains(out, s):
		case !ok(s), len(out) >= maxEntries:
			drop(label + quote(s))
		default:
			out = append(out, s)
		}
	}
	return out
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return `"` + s + `"`
}

func validCommand(s string) bool {
	if s == "" || len(s) > maxCommandLen {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// cleanPath cleans a relative or absolute path ("" is ".").
func cleanPath(s string) string { return filepath.Clean(s) }

// pathAllowed reports whether s may stand in a manifest: a relative path
// that stays in the worktree, or an absolute one within one of within
// (when within is given) and under none of deny.
func pathAllowed(s string, within, deny []string) bool {
	if s == "" || strings.ContainsRune(s, 0) {
		return false
	}
	c := filepath.Clean(s)
	if !filepath.IsAbs(c) {
		return c != ".." && !strings.HasPrefix(c, "../")
	}
	for _, d := range deny {
		if under(c, d) || under(d, c) {
			return false // a denied path, or a directory holding one
		}
	}
	if within == nil {
		return true
	}
	for _, w := range within {
		if under(c, w) {
			return true
		}
	}
	return false
}

// under reports whether p is dir or beneath it.
func under(p, dir string) bool {
	dir = filepath.Clean(dir)
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
