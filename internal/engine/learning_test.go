package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLearnings(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"Done.\n[LEARNING] the greeting lives in greeting.txt\n", []string{"the greeting lives in greeting.txt"}},
		{"- [LEARNING]: tests need `make gen` first\n  > [LEARNING] one\n[LEARNING] one", []string{"tests need `make gen` first", "one"}},
		{"I saw no [LEARNING] marker here", nil},
		{"[LEARNING]\n[LEARNING]   \n", nil},
		{"[LEARNING] a\x1b[31mred\x1b[0m\tfact", []string{`a\x1b[31mred\x1b[0m fact`}},
		{strings.Repeat("[LEARNING] x\n", 1) + "[LEARNING] 1\n[LEARNING] 2\n[LEARNING] 3\n[LEARNING] 4\n[LEARNING] 5\n", []string{"x", "1", "2", "3", "4"}},
	}
	for _, c := range cases {
		if got := Learnings(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Learnings(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Learnings("[LEARNING] " + strings.Repeat("a", 2000)); len(got) != 1 || utf8.RuneCountInString(got[0]) > maxLearning+1 {
		t.Errorf("a long learning is not clipped: %d runes", len(got[0]))
	}
}

// learnHost records learnings; the rest of Host is unused.
type learnHost struct {
	Host
	got []Learning
	err error
}

func (h *learnHost) RecordLearning(_ context.Context, l Learning) error {
	h.got = append(h.got, l)
	return h.err
}

func TestReportLearnings(t *testing.T) {
	h := &learnHost{}
	if err := ReportLearnings(t.Context(), h, 3, "ok\n[LEARNING] run make gen first\n", []string{"docs", "group:g1"}); err != nil {
		t.Fatal(err)
	}
	if len(h.got) != 1 || h.got[0].Summary != "run make gen first" || h.got[0].Turn != 3 || !slices.Equal(h.got[0].Tags, []string{"docs"}) {
		t.Fatalf("recorded %+v", h.got)
	}
	h = &learnHost{err: errors.New("store closed")}
	if err := ReportLearnings(t.Context(), h, 1, "[LEARNING] x", nil); err == nil || !strings.Contains(err.Error(), "store closed") {
		t.Fatalf("err = %v, want the store's error", err)
	}
	if err := ReportLearnings(t.Context(), h, 1, "nothing learned", nil); err != nil {
		t.Fatalf("a reply without learnings: %v", err)
	}
}
