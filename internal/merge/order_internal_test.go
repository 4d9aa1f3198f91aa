package merge

import (
	"fmt"
	"slices"
	"testing"
)

func TestParseNumstat(t *testing.T) {
	c := parseNumstat("3\t1\tb.go\x00-\t-\timg.png\x0010\t0\ta dir/a.go\x00")
	if c.lines != 3+1+1+10 || !slices.Equal(c.files, []string{"a dir/a.go", "b.go", "img.png"}) {
		t.Errorf("parseNumstat = %+v", c)
	}
	if c := parseNumstat(""); c.lines != 0 || len(c.files) != 0 {
		t.Errorf("empty = %+v", c)
	}
}

func TestShared(t *testing.T) {
	if got := shared([]string{"a", "c", "e"}, []string{"b", "c", "d", "e"}); !slices.Equal(got, []string{"c", "e"}) {
		t.Errorf("shared = %v", got)
	}
}

// TestOverlapOrder: groups linked by shared files are sorted smaller first
// within their places; the others keep theirs.
func TestOverlapOrder(t *testing.T) {
	cs := []change{
		{files: []string{"x.go"}, lines: 50},         // 0: large, x
		{files: []string{"other.go"}, lines: 500},    // 1: alone
		{files: []string{"x.go", "y.go"}, lines: 10}, // 2: x and y
		{files: []string{"y.go"}, lines: 2},          // 3: y only: linked through 2
		{files: []string{"z.go"}, lines: 1},          // 4: alone
		{files: []string{"x.go"}, lines: 10},         // 5: x, as many lines as 2 but fewer files
	}
	perm, ds := overlapOrder(cs)
	// The group {0, 2, 3, 5} holds places 0, 2, 3, 5: sorted 3, 5, 2, 0.
	if want := []int{3, 1, 5, 2, 4, 0}; !slices.Equal(perm, want) {
		t.Errorf("order = %v, want %v", perm, want)
	}
	var got []string
	for _, d := range ds {
		got = append(got, fmt.Sprintf("%d after %d on %v", d.larger, d.smaller, d.files))
	}
	slices.Sort(got)
	want := []string{"0 after 2 on [x.go]", "0 after 5 on [x.go]", "2 after 3 on [y.go]", "2 after 5 on [x.go]"}
	if !slices.Equal(got, want) {
		t.Errorf("decisions = %q, want %q", got, want)
	}
	// Nothing shared: first come, first served.
	perm, ds = overlapOrder([]change{{files: []string{"a"}, lines: 9}, {files: []string{"b"}, lines: 1}})
	if !slices.Equal(perm, []int{0, 1}) || len(ds) != 0 {
		t.Errorf("no overlap: %v %v", perm, ds)
	}
}
