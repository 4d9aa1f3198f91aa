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
}
