package cli

import (
	"bytes"
	"slices"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

func TestWithOverlapTag(t *testing.T) {
	tags := []string{"auth"}
	if got := withOverlapTag(tags, false); !slices.Equal(got, []string{"auth"}) {
		t.Errorf("off: %v", got)
	}
	got := withOverlapTag(tags, true)
	if !slices.Equal(got, []string{"auth", "no-overlap-notices"}) || !slices.Equal(tags, []string{"auth"}) {
		t.Errorf("on: %v (input now %v)", got, tags)
	}
	if got := withOverlapTag(got, true); len(got) != 2 {
		t.Errorf("twice: %v, want the tag once", got)
	}
}

func TestWriteOverlap(t *testing.T) {
	var b bytes.Buffer
	writeOverlap(&b, []api.OverlapPair{{A: "t-aaaaa", B: "t-bbbbb", Files: []string{"a.go", "b.go"}, Forecast: "conflict", Conflicts: []string{"a.go"}}})
	if want := "t-aaaaa  t-bbbbb  conflict (a.go)  a.go, b.go\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	p := api.OverlapPair{A: "t-aaaaa", B: "t-bbbbb", Files: []string{"a.go", "b.go"}, Forecast: "clean", Lines: []api.OverlapLines{
		{File: "a.go", A: []api.LineRange{{From: 2, To: 2}}, B: []api.LineRange{{From: 30, To: 34}, {From: 38, To: 38}}},
		{File: "b.go", A: []api.LineRange{{From: 7, To: 8}}, B: []api.LineRange{{From: 9, To: 8}}, Intersect: true},
	}}
	writeOverlap(&b, []api.OverlapPair{p})
	want := "t-aaaaa  t-bbbbb  clean     a.go, b.go\n" +
		"    a.go: lines 2 | 30-34,38  (ranges apart)\n" +
		"    b.go: lines 7-8 | after 8  (ranges intersect)\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	if got := p.LinesSummary(); got != "lines intersect in b.go" {
		t.Errorf("summary = %q", got)
	}
	p.Lines = p.Lines[:1]
	if got := p.LinesSummary(); got != "changed lines apart" {
		t.Errorf("summary = %q", got)
	}
}
