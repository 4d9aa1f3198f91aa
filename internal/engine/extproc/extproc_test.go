package extproc

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestReadLinesSkipsMalformed(t *testing.T) {
	t.Parallel()
	in := "{\"a\":1}\nnot json at all\n\n{\"b\":2}\n{\"c\":" + "\n{\"d\":4}"
	var logged bytes.Buffer
	var got []string
	err := ReadLines(strings.NewReader(in), slog.New(slog.NewTextHandler(&logged, nil)), func(b []byte) error {
		got = append(got, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`{"a":1}`, `{"b":2}`, `{"d":4}`}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("lines = %q, want %q", got, want)
	}
	if n := strings.Count(logged.String(), "skipping a malformed line"); n != 2 {
		t.Errorf("logged %d malformed lines, want 2:\n%s", n, logged.String())
	}
}

func TestEnvironKeepsSecretsOut(t *testing.T) {
	t.Parallel()
	env := Environ([]string{"PATH=/bin", "ANTHROPIC_API_KEY=parent", "GH_TOKEN=x", "NEURAPHAGE_HOME=/h", "FOO=1", "LC_ALL=C"},
		nil, []string{"ANTHROPIC_API_KEY=mine"})
	got := strings.Join(env, " ")
	if got != "PATH=/bin LC_ALL=C ANTHROPIC_API_KEY=mine" {
		t.Fatalf("env = %q", got)
	}
}

func TestReadLinesLongLine(t *testing.T) {
	t.Parallel()
	long := `{"x":"` + strings.Repeat("a", 300<<10) + `"}`
	var got []int
	err := ReadLines(strings.NewReader(long+"\n"+`{"y":1}`+"\n"), slog.New(slog.DiscardHandler), func(b []byte) error {
		got = append(got, len(b))
		return nil
	})
	if err != nil || len(got) != 2 || got[0] != len(long) || got[1] != 7 {
		t.Fatalf("lines %v, %v; want %d and 7 bytes", got, err, len(long))
	}
}
