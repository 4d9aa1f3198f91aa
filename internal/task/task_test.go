package task

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

func TestTransitionTable(t *testing.T) {
	t.Parallel()
	legal := map[[2]Status]bool{}
	for from, tos := range transitions {
		for _, to := range tos {
			legal[[2]Status{from, to}] = true
		}
	}
	for _, from := range AllStatuses() {
		for _, to := range AllStatuses() {
			tk := Task{ID: "t-aaaaa", Status: from}
			err := tk.Transition(to, "why", t0)
			want := legal[[2]Status{from, to}]
			if (err == nil) != want {
				t.Errorf("%s → %s: err = %v, legal = %v", from, to, err, want)
			}
			if err != nil {
				var te *TransitionError
				if !errors.As(err, &te) || te.From != from || te.To != to {
					t.Errorf("%s → %s: error %v is not a *TransitionError for the move", from, to, err)
				}
				if tk.Status != from {
					t.Errorf("%s → %s: refused move changed the status to %s", from, to, tk.Status)
				}
			}
		}
	}
	for _, s := range []Status{Completed, Failed, Cancelled} {
		if len(transitions[s]) != 0 || !s.Terminal() {
			t.Errorf("%s must be terminal", s)
		}
	}
}

func TestTransitionTimestamps(t *testing.T) {
	t.Parallel()
	tk := Task{ID: "t-aaaaa", Status: Queued, ResumePending: true}
	steps := []Status{Running, Paused, Queued, Running, Completed}
	for i, to := range steps {
		if err := tk.Transition(to, "", t0.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if tk.StartedAt == nil || !tk.StartedAt.Equal(t0) {
		t.Errorf("StartedAt = %v, want the first start %v", tk.StartedAt, t0)
	}
	if tk.FinishedAt == nil || !tk.FinishedAt.Equal(t0.Add(4*time.Minute)) {
		t.Errorf("FinishedAt = %v", tk.FinishedAt)
	}
	if tk.ResumePending {
		t.Error("running must clear ResumePending")
	}
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		spec  Spec
		field string
	}{
		{"empty description", Spec{Description: "  "}, "description"},
		{"long description", Spec{Description: strings.Repeat("x", MaxDescriptionLen+1)}, "description"},
		{"priority low", Spec{Description: "x", Priority: -1}, "priority"},
		{"priority high", Spec{Description: "x", Priority: 5}, "priority"},
		{"negative budget", Spec{Description: "x", Budget: Budget{MaxCostUSD: -1}}, "budget"},
		{"tag with space", Spec{Description: "x", Tags: []string{"a b"}}, "tags"},
	} {
		_, err := New("t-aaaaa", tc.spec, t0)
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("%s: error %v, want an *InvalidError on %s", tc.name, err, tc.field)
		}
	}
	tk, err := New("t-aaaaa", Spec{Description: " do it ", Tags: []string{"Auth", "auth", " jwt "}, Hold: true}, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := Task{ID: "t-aaaaa", Description: "do it", Tags: []string{"auth", "jwt"}, Status: Paused,
		CloseReason: "created with --no-start", CreatedAt: t0, UpdatedAt: t0}
	if diff := cmp.Diff(want, tk); diff != "" {
		t.Errorf("New (-want +got):\n%s", diff)
	}
}

func TestIDs(t *testing.T) {
	t.Parallel()
	id, err := NewID(bytes.NewReader([]byte{0, 1, 31, 32, 255}))
	if err != nil {
		t.Fatal(err)
	}
	if id != "t-01z0z" {
		t.Errorf("NewID = %q, want t-01z0z", id)
	}
	if _, err := NewID(bytes.NewReader(nil)); err == nil {
		t.Error("NewID with no randomness succeeded")
	}
	for in, want := range map[string]string{"t-4k2x9": "t-4k2x9", "4K2X9": "t-4k2x9", " 4k ": "t-4k"} {
		if got, err := NormalizeRef(in); err != nil || got != want {
			t.Errorf("NormalizeRef(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "t-", "t-il0u", "t-a/b", "t-" + strings.Repeat("a", 20)} {
		if _, err := NormalizeRef(bad); err == nil {
			t.Errorf("NormalizeRef(%q) accepted", bad)
		}
	}
}

func TestReadiness(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []Status
		want Readiness
	}{
		{nil, Ready},
		{[]Status{Completed, Completed}, Ready},
		{[]Status{Completed, Running}, Blocked},
		{[]Status{Queued, Failed}, Stranded},
		{[]Status{Cancelled}, Stranded},
	} {
		if got := ReadinessOf(tc.in); got != tc.want {
			t.Errorf("ReadinessOf(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestFindCycle(t *testing.T) {
	t.Parallel()
	g := map[ID][]ID{"a": {"b"}, "b": {"c", "d"}, "d": {"e"}}
	of := func(id ID) []ID { return g[id] }
	if path, ok := FindCycle("e", "a", of); !ok || !cmp.Equal(path, []ID{"a", "b", "d", "e"}) {
		t.Errorf("FindCycle(e→a) = %v, %v; want [a b d e], true", path, ok)
	}
	if _, ok := FindCycle("a", "e", of); ok {
		t.Error("FindCycle(a→e) found a cycle in a DAG")
	}
	if _, ok := FindCycle("a", "a", of); !ok {
		t.Error("self dependency is a cycle")
	}
}
