package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// LearningMarker starts a line of an external agent's reply that reports a
// learning: the CLIs have no tool for it (the native loop has
// record_learning), so each engine tells its agent (LearningNote) to write
//
//	[LEARNING] the fact, in one sentence
//
// on a line of its own, and records every such line of a turn's text as the
// task's learning, which the Syncer relays and briefs like any other.
const LearningMarker = "[LEARNING]"

// LearningNote is the instruction each external engine gives its agent.
const LearningNote = "When you find out something other agents working on the same repository would need " +
	"(where a thing lives, a command that works, a trap), write it on a line of its own that starts with " +
	LearningMarker + " followed by the fact in one sentence. Never write that marker otherwise."

// maxLearning bounds a learning's summary; maxLearnings the learnings one
// text reports.
const (
	maxLearning  = 500
	maxLearnings = 5
)

// Learnings are the learnings a reply reports: the rest of every line that
// starts with LearningMarker (after spaces and list or quote marks), as one
// line without terminal controls, in order, without repeats, at most
// maxLearnings. A marker inside a line does not count.
func Learnings(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		line = strings.TrimLeft(line, " \t>*-")
		rest, ok := strings.CutPrefix(line, LearningMarker)
		if !ok {
			continue
		}
		s := words.Clip(words.Printable(words.OneLine(strings.TrimLeft(rest, ": \t"))), maxLearning)
		if s == "" || slices.Contains(out, s) {
			continue
		}
		if out = append(out, s); len(out) == maxLearnings {
			break
		}
	}
	return out
}

// ReportLearnings records the learnings text reports (Learnings) as turn's,
// tagged with the task's tags (group tags left out).
func ReportLearnings(ctx context.Context, h Host, turn int, text string, tags []string) error {
	var own []string
	for _, t := range tags {
		if !strings.HasPrefix(t, "group:") {
			own = append(own, t)
		}
	}
	for _, s := range Learnings(text) {
		if err := h.RecordLearning(ctx, Learning{Turn: turn, Summary: s, Tags: own}); err != nil {
			return fmt.Errorf("recording a learning: %w", err)
		}
	}
	return nil
}

// StepLearnings records the learnings the text observations of a committed
// step report (ReportLearnings): an external engine calls it after each
// commit, so every reply of its agent is read once.
func StepLearnings(ctx context.Context, h Host, s Step, tags []string) error {
	for _, p := range s.Events {
		if t, ok := p.(event.Text); ok {
			if err := ReportLearnings(ctx, h, t.Turn, t.Text, tags); err != nil {
				return err
			}
		}
	}
	return nil
}
