package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const commented = `# Neuraphage configuration
# (hand-written)

log:
  level: info # quiet by default
# The daemon.
daemon:
  auto_start: false
  # Give agents time to flush.
  shutdown_timeout_secs: 30
tasks:
  default_engine: "native"
  default_priority: 1
`

func TestSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		before     string
		key, value string
		after      string
	}{
		{
			name: "replaces a value keeping comments and order", before: commented,
			key: "log.level", value: "debug",
			after: strings.Replace(commented, "level: info", "level: debug", 1),
		},
		{
			name: "keeps the quoting of a string", before: commented,
			key: "tasks.default_engine", value: "claude",
			after: strings.Replace(commented, `"native"`, `"claude"`, 1),
		},
		{
			name: "adds a key at the end of its section", before: commented,
			key: "daemon.start_timeout_secs", value: "5",
			after: strings.Replace(commented, "shutdown_timeout_secs: 30\n", "shutdown_timeout_secs: 30\n  start_timeout_secs: 5\n", 1),
		},
		{
			name: "adds a section at the end", before: commented,
			key: "events.retention_days", value: "7",
			after: commented + "events:\n  retention_days: 7\n",
		},
		{
			name: "parses YAML booleans", before: commented,
			key: "daemon.auto_start", value: "yes",
			after: strings.Replace(commented, "auto_start: false", "auto_start: true", 1),
		},
		{
			name: "fills an empty section", before: "daemon: # later\n",
			key: "daemon.auto_start", value: "false",
			after: "daemon: # later\n  auto_start: false\n",
		},
		{
			name: "edits a flow mapping", before: "log: {level: info}\n",
			key: "log.level", value: "warn",
			after: "log: {level: warn}\n",
		},
		{
			name: "keeps a file of only comments", before: "# to do\n",
			key: "log.level", value: "warn",
			after: "# to do\nlog:\n  level: warn\n",
		},
		{
			name: "reindents to two spaces", before: "log:\n    level: info\n",
			key: "log.level", value: "error",
			after: "log:\n  level: error\n",
		},
		{
			name: "quotes a string that looks like a number", before: "",
			key: "tasks.default_engine", value: "42",
			after: "tasks:\n  default_engine: \"42\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeTemp(t, tt.before)
			if err := Set(path, tt.key, tt.value); err != nil {
				t.Fatalf("Set: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.after, string(got)); diff != "" {
				t.Errorf("file after Set mismatch (-want +got):\n%s", diff)
			}
			c, err := Load(path)
			if err != nil {
				t.Fatalf("Load after Set: %v", err)
			}
			if v, _ := Get(c, tt.key); strings.Trim(v, `"`) != tt.value && tt.value != "yes" {
				t.Errorf("Get(%q) after Set = %q, want %q", tt.key, v, tt.value)
			}
		})
	}
}

func TestSetCreatesFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "config")
	path := filepath.Join(dir, "neuraphage.yaml")
	if err := Set(path, "daemon.shutdown_timeout_secs", "20"); err != nil {
		t.Fatalf("Set: %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "daemon:\n  shutdown_timeout_secs: 20\n"; string(got) != want {
		t.Errorf("new file = %q, want %q", got, want)
	}
	for p, want := range map[string]fs.FileMode{path: 0o600, dir: 0o700} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != want {
			t.Errorf("mode of %s = %v (%v), want %v", p, info.Mode().Perm(), err, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the config file (no temp files)", len(entries))
	}
}

func TestSetKeepsModeAndFollowsSymlink(t *testing.T) {
	t.Parallel()
	real := writeTemp(t, "log:\n  level: info\n")
	if err := os.Chmod(real, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := Set(link, "log.level", "warn"); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced (%v, %v)", fi, err)
	}
	info, err := os.Stat(real)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640", info.Mode().Perm())
	}
	if got, _ := os.ReadFile(real); string(got) != "log:\n  level: warn\n" {
		t.Errorf("target file = %q", got)
	}
}

func TestSetList(t *testing.T) {
	t.Parallel()
	// Config has no list yet, so exercise the parser that Set uses.
	for _, tt := range []struct {
		value string
		want  []string
	}{
		{"a, b ,c", []string{"a", "b", "c"}},
		{"[a, 'b, c']", []string{"a", "b, c"}},
		{"", []string{}},
		{"one", []string{"one"}},
	} {
		n, err := valueNode("x.tags", reflect.TypeFor[[]string](), tt.value)
		if err != nil {
			t.Errorf("valueNode(%q): %v", tt.value, err)
			continue
		}
		var got []string
		if err := n.Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got == nil {
			got = []string{}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("valueNode(%q) mismatch (-want +got):\n%s", tt.value, diff)
		}
	}
	if _, err := valueNode("x.ports", reflect.TypeFor[[]int](), "1, two"); err == nil {
		t.Error(`valueNode([]int, "1, two") succeeded`)
	}
	if _, err := valueNode("x.ratio", reflect.TypeFor[float64](), "0.25"); err != nil {
		t.Errorf("valueNode(float64, 0.25): %v", err)
	}
}

func TestSetRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, before, key, value string
		wantKey, wantMsg         string
		wantLine                 int
	}{
		{name: "unknown key", before: commented, key: "log.levle", value: "x",
			wantKey: "log.levle", wantMsg: `unknown key; did you mean "log.level"?`},
		{name: "wrong type", before: commented, key: "daemon.shutdown_timeout_secs", value: "ten",
			wantKey: "daemon.shutdown_timeout_secs", wantMsg: `want an integer, got "ten"`},
		{name: "empty value for an int", before: commented, key: "tasks.default_priority", value: "",
			wantKey: "tasks.default_priority", wantMsg: `want an integer, got ""`},
		{name: "invalid value", before: commented, key: "tasks.default_priority", value: "9",
			wantKey: "tasks.default_priority", wantMsg: "want 0 to 4, got 9"},
		{name: "invalid string", before: commented, key: "log.level", value: "loud",
			wantKey: "log.level", wantMsg: `want one of debug, info, warn, error, got "loud"`},
		{name: "section key", before: commented, key: "daemon", value: "x",
			wantKey: "daemon", wantMsg: "is a section, not a setting; set one of: daemon.shutdown_timeout_secs, daemon.start_timeout_secs, daemon.auto_start"},
		{name: "broken file elsewhere is reported at its line", before: "log:\n  level: info\nbogus: 1\n", key: "log.level", value: "warn",
			wantKey: "bogus", wantLine: 3, wantMsg: "unknown key; valid keys at the top level: log, daemon, events, tasks, executor, agent, budget, sandbox, engines, worktree, merge, supervision, notify, hooks, llm, mcp, web, cluster"},
		{name: "syntax error", before: "log: ]\n", key: "log.level", value: "warn",
			wantLine: 1, wantMsg: "invalid YAML: did not find expected node content"},
		{name: "section that is not a mapping", before: "daemon: 3\n", key: "daemon.auto_start", value: "true",
			wantKey: "daemon", wantLine: 1, wantMsg: "want a mapping, got 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeTemp(t, tt.before)
			err := Set(path, tt.key, tt.value)
			ce := asError(t, err)
			wantFile := ""
			if tt.wantLine > 0 {
				wantFile = path
			}
			got := Error{File: ce.File, Line: ce.Line, Key: ce.Key, Msg: ce.Msg}
			want := Error{File: wantFile, Line: tt.wantLine, Key: tt.wantKey, Msg: tt.wantMsg}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Set error %q mismatch (-want +got):\n%s", err, diff)
			}
			after, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if diff := cmp.Diff(tt.before, string(after)); diff != "" {
				t.Errorf("Set changed the file despite the error (-before +after):\n%s", diff)
			}
		})
	}
}

func TestSetRejectsWithoutCreating(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "neuraphage.yaml")
	if err := Set(path, "tasks.default_priority", "9"); err == nil {
		t.Fatal("Set of an invalid value succeeded")
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("Set created %s despite the error (stat: %v)", filepath.Dir(path), err)
	}
}
