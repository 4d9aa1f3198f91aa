package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWorktreeMergeDefaults(t *testing.T) {
	t.Parallel()
	c := Default()
	if diff := cmp.Diff(Worktree{PortEnv: "PORT", IgnoredSkip: DefaultIgnoredSkip}, c.Worktree); diff != "" {
		t.Errorf("Default().Worktree mismatch (-want +got):\n%s", diff)
	}
	want := Merge{Auto: true, Strategy: "rebase", GateTimeoutSecs: 1800, MaxSendBacks: 3, Remote: "origin", Cleanup: true}
	if diff := cmp.Diff(want, c.Merge); diff != "" {
		t.Errorf("Default().Merge mismatch (-want +got):\n%s", diff)
	}
	for key, want := range map[string]string{
		"worktree.root":           `""`,
		"worktree.base":           `""`,
		"worktree.port_env":       "PORT",
		"worktree.ignored_skip":   "- node_modules/\n- target/\n- dist/\n- .cache/\n- __pycache__/\n- '*.pyc'",
		"worktree.bootstrap":      "[]",
		"worktree.parallel":       "0",
		"merge.auto":              "true",
		"merge.strategy":          "rebase",
		"merge.gate":              `""`,
		"merge.gate_timeout_secs": "1800",
		"merge.max_send_backs":    "3",
		"merge.author_name":       `""`,
		"merge.author_email":      `""`,
		"merge.pr":                "false",
		"merge.remote":            "origin",
		"merge.cleanup":           "true",
	} {
		if got, err := Get(c, key); err != nil || got != want {
			t.Errorf("Get(Default(), %q) = %q, %v; want %q", key, got, err, want)
		}
	}
}

func TestWorktreeMergeValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(*Config)
		key    string
		msg    string // exact message; "" when only the key is checked
	}{
		{"unknown strategy", func(c *Config) { c.Merge.Strategy = "ff" }, "merge.strategy", `want one of rebase, merge, squash, got "ff"`},
		{"empty strategy", func(c *Config) { c.Merge.Strategy = "" }, "merge.strategy", `want one of rebase, merge, squash, got ""`},
		{"gate timeout zero", func(c *Config) { c.Merge.GateTimeoutSecs = 0 }, "merge.gate_timeout_secs", "want 1 to 86400, got 0"},
		{"gate timeout too high", func(c *Config) { c.Merge.GateTimeoutSecs = 86401 }, "merge.gate_timeout_secs", "want 1 to 86400, got 86401"},
		{"negative send-backs", func(c *Config) { c.Merge.MaxSendBacks = -1 }, "merge.max_send_backs", "want 0 to 100, got -1"},
		{"too many send-backs", func(c *Config) { c.Merge.MaxSendBacks = 101 }, "merge.max_send_backs", "want 0 to 100, got 101"},
		{"email without @", func(c *Config) { c.Merge.AuthorEmail = "bot" }, "merge.author_email", ""},
		{"email with brackets", func(c *Config) { c.Merge.AuthorEmail = "<bot@x>" }, "merge.author_email", ""},
		{"name with brackets", func(c *Config) { c.Merge.AuthorName = "Bot <b@x>" }, "merge.author_name", ""},
		{"pr without remote", func(c *Config) { c.Merge.PR, c.Merge.Remote = true, "" }, "merge.remote", "must not be empty when pr is true"},
		{"remote like an option", func(c *Config) { c.Merge.Remote = "--mirror" }, "merge.remote", `must not start with -, got "--mirror"`},
		{"port env with dash", func(c *Config) { c.Worktree.PortEnv = "MY-PORT" }, "worktree.port_env", ""},
		{"negative parallel", func(c *Config) { c.Worktree.Parallel = -1 }, "worktree.parallel", ""},
		{"parallel too high", func(c *Config) { c.Worktree.Parallel = 1000 }, "worktree.parallel", ""},
		{"port env starting with a digit", func(c *Config) { c.Worktree.PortEnv = "1PORT" }, "worktree.port_env", ""},
		{"root with tilde", func(c *Config) { c.Worktree.Root = "~/wt" }, "worktree.root", ""},
		{"base like an option", func(c *Config) { c.Worktree.Base = "-b" }, "worktree.base", ""},
		{"base with a space", func(c *Config) { c.Worktree.Base = "my branch" }, "worktree.base", ""},
		{"relative bootstrap repo", func(c *Config) {
			c.Worktree.Bootstrap = []Bootstrap{{}, {Repo: "src/app"}}
		}, "worktree.bootstrap.1.repo", `want an absolute path, or "" for every repository, got "src/app"`},
		{"absolute copy", func(c *Config) {
			c.Worktree.Bootstrap = []Bootstrap{{Copy: []string{".env", "/etc/passwd"}}}
		}, "worktree.bootstrap.0.copy.1", `want a path relative to the repository, got "/etc/passwd"`},
		{"copy with ..", func(c *Config) {
			c.Worktree.Bootstrap = []Bootstrap{{Copy: []string{"a/../../b"}}}
		}, "worktree.bootstrap.0.copy.0", `must not contain "..", got "a/../../b"`},
		{"empty copy", func(c *Config) {
			c.Worktree.Bootstrap = []Bootstrap{{Copy: []string{""}}}
		}, "worktree.bootstrap.0.copy.0", "must not be empty"},
		{"copy of the repository itself", func(c *Config) {
			c.Worktree.Bootstrap = []Bootstrap{{Copy: []string{"./"}}}
		}, "worktree.bootstrap.0.copy.0", ""},
		{"bad glob", func(c *Config) {
			c.Worktree.Bootstrap = []Bootstrap{{Copy: []string{"ok", "config/[a"}}}
		}, "worktree.bootstrap.0.copy.1", `not a valid glob pattern: "config/[a"`},
		{"negative setup timeout", func(c *Config) {
			c.Worktree.Bootstrap = []Bootstrap{{SetupTimeoutSecs: -1}}
		}, "worktree.bootstrap.0.setup_timeout_secs", "want 0 to 86400, got -1"},
		{"setup timeout too high", func(c *Config) {
			c.Worktree.Bootstrap = []Bootstrap{{SetupTimeoutSecs: 86401}}
		}, "worktree.bootstrap.0.setup_timeout_secs", "want 0 to 86400, got 86401"},
		{"two entries for one repository", func(c *Config) {
			c.Worktree.Bootstrap = []Bootstrap{{Repo: "/src/app"}, {}, {Repo: "/src/app/"}}
		}, "worktree.bootstrap.2.repo", `repository "/src/app" already has an entry, worktree.bootstrap.0`},
		{"two entries for every repository", func(c *Config) {
			c.Worktree.Bootstrap = []Bootstrap{{}, {Setup: "x"}}
		}, "worktree.bootstrap.1.repo", `every repository (repo "") already has an entry, worktree.bootstrap.0`},
		{"valid edges", func(c *Config) {
			c.Worktree = Worktree{Root: "../wt", Base: "release/1.x", PortEnv: "", Bootstrap: []Bootstrap{
				{Repo: "/src/app", Copy: []string{".env*", "config/local.yaml", "a..b", "[ab]*"}, SetupTimeoutSecs: 86400},
				{Copy: nil, Setup: "npm ci", SetupTimeoutSecs: 0},
			}}
			c.Merge = Merge{Strategy: "merge", GateTimeoutSecs: 1, MaxSendBacks: 0, AuthorEmail: "a@b", Remote: ""}
		}, "", ""},
		{"more valid edges", func(c *Config) {
			c.Worktree.PortEnv = "_P0"
			c.Merge = Merge{Strategy: "squash", GateTimeoutSecs: 86400, MaxSendBacks: 100, PR: true, Remote: "upstream"}
		}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			tt.modify(&c)
			err := c.Validate()
			if tt.key == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			ce := asError(t, err)
			if ce.Key != tt.key || ce.File != "" || ce.Line != 0 || ce.Msg == "" {
				t.Errorf("Validate = %+v, want Key %q, a message and no file or line", ce, tt.key)
			}
			if tt.msg != "" && ce.Msg != tt.msg {
				t.Errorf("Msg = %q, want %q", ce.Msg, tt.msg)
			}
		})
	}
}

func TestWorktreeMergeLoad(t *testing.T) {
	t.Parallel()
	got, err := Load(writeTemp(t, `# worktrees
worktree:
  base: trunk
  bootstrap:
    - repo: /src/app/
      copy: [.env, "certs/*.pem"]
      setup: npm ci
      setup_timeout_secs: 900
    - copy:
        - .env*
merge:
  strategy: squash
  gate: go test ./...
  pr: true
`))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Default()
	want.Worktree.Base = "trunk"
	want.Worktree.Bootstrap = []Bootstrap{
		{Repo: "/src/app/", Copy: []string{".env", "certs/*.pem"}, Setup: "npm ci", SetupTimeoutSecs: 900},
		{Copy: []string{".env*"}},
	}
	want.Merge.Strategy = "squash"
	want.Merge.Gate = "go test ./..."
	want.Merge.PR = true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load mismatch (-want +got):\n%s", diff)
	}
	if b := got.Worktree.BootstrapFor("/src/app"); b.Setup != "npm ci" || b.SetupTimeout() != 15*time.Minute {
		t.Errorf("BootstrapFor(/src/app) = %+v (timeout %v), want the npm ci entry with 15m", b, b.SetupTimeout())
	}

	// An empty port_env hands no port; a bare "port_env:" is null and keeps
	// the default.
	for yaml, want := range map[string]string{
		"worktree:\n  port_env: \"\"\n": "",
		"worktree:\n  port_env: ''\n":   "",
		"worktree:\n  port_env:\n":      "PORT",
		"worktree:\n  port_env: NP\n":   "NP",
	} {
		c, err := Load(writeTemp(t, yaml))
		if err != nil || c.Worktree.PortEnv != want {
			t.Errorf("Load(%q): port_env = %q, %v; want %q", yaml, c.Worktree.PortEnv, err, want)
		}
	}
}

func TestWorktreeMergeLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		line       int
		key, msg   string
	}{
		{
			name: "unknown strategy", yaml: "merge:\n  auto: true\n  strategy: fast-forward\n",
			line: 3, key: "merge.strategy", msg: `want one of rebase, merge, squash, got "fast-forward"`,
		},
		{
			name: "typo in merge", yaml: "merge:\n  stratgy: squash\n",
			line: 2, key: "merge.stratgy",
			msg: `unknown key; did you mean "strategy"?; valid keys in merge: auto, strategy, gate, gate_timeout_secs, max_send_backs, author_name, author_email, pr, remote, cleanup`,
		},
		{
			name: "typo in a bootstrap entry", yaml: "worktree:\n  bootstrap:\n    - repo: /a\n      cpy: [.env]\n",
			line: 4, key: "worktree.bootstrap.0.cpy",
			msg: `unknown key; did you mean "copy"?; valid keys in worktree.bootstrap.0: repo, copy, setup, setup_timeout_secs`,
		},
		{
			name: "wrong type", yaml: "merge:\n  max_send_backs: few\n",
			line: 2, key: "merge.max_send_backs", msg: `want an integer, got "few"`,
		},
		{
			name: "gate timeout out of range", yaml: "merge:\n  gate: make check\n  gate_timeout_secs: 0\n",
			line: 3, key: "merge.gate_timeout_secs", msg: "want 1 to 86400, got 0",
		},
		{
			name: "send-backs out of range", yaml: "merge: {max_send_backs: 500}\n",
			line: 1, key: "merge.max_send_backs", msg: "want 0 to 100, got 500",
		},
		{
			name: "bad email", yaml: "merge:\n  author_name: Bot\n  author_email: bot.example.com\n",
			line: 3, key: "merge.author_email", msg: `want an address with @, or "" for git's identity, got "bot.example.com"`,
		},
		{
			name: "pr with an empty remote", yaml: "merge:\n  remote: ''\n  pr: true\n",
			line: 2, key: "merge.remote", msg: "must not be empty when pr is true",
		},
		{
			name: "bad port_env", yaml: "worktree:\n  port_env: APP PORT\n",
			line: 2, key: "worktree.port_env",
			msg: `want an environment variable name (letters, digits and _, not starting with a digit) or "" for none, got "APP PORT"`,
		},
		{
			name: "copy entry at its own line", yaml: "worktree:\n  bootstrap:\n    - repo: /src/app\n      copy:\n        - .env\n        - ../secrets\n",
			line: 6, key: "worktree.bootstrap.0.copy.1", msg: `must not contain "..", got "../secrets"`,
		},
		{
			name: "copy entry in a flow list", yaml: "worktree:\n  bootstrap:\n    - {copy: [.env]}\n    - {repo: /b, copy: [.env, /etc/hosts]}\n",
			line: 4, key: "worktree.bootstrap.1.copy.1", msg: `want a path relative to the repository, got "/etc/hosts"`,
		},
		{
			name: "relative repo", yaml: "worktree:\n  bootstrap:\n    - repo: app\n      setup: make\n",
			line: 3, key: "worktree.bootstrap.0.repo", msg: `want an absolute path, or "" for every repository, got "app"`,
		},
		{
			name: "setup timeout", yaml: "worktree:\n  bootstrap:\n    - setup: make\n      setup_timeout_secs: -5\n",
			line: 4, key: "worktree.bootstrap.0.setup_timeout_secs", msg: "want 0 to 86400, got -5",
		},
		{
			name: "key absent from the entry is reported at the entry", yaml: "worktree:\n  bootstrap:\n    - {setup: a}\n    - {setup: b}\n",
			line: 4, key: "worktree.bootstrap.1.repo", msg: `every repository (repo "") already has an entry, worktree.bootstrap.0`,
		},
		{
			name: "bootstrap is a list", yaml: "worktree:\n  bootstrap: {repo: /a}\n",
			line: 2, key: "worktree.bootstrap", msg: "want a list, got a mapping",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeTemp(t, tt.yaml)
			_, err := Load(path)
			ce := asError(t, err)
			got := Error{File: ce.File, Line: ce.Line, Key: ce.Key, Msg: ce.Msg}
			want := Error{File: path, Line: tt.line, Key: tt.key, Msg: tt.msg}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load error %q mismatch (-want +got):\n%s", err, diff)
			}
			if !strings.HasPrefix(err.Error(), path+":") {
				t.Errorf("Error() = %q, want it to start with the file name", err)
			}
		})
	}
}

func TestBadGlobKeepsCause(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Worktree.Bootstrap = []Bootstrap{{Copy: []string{"["}}}
	if err := c.Validate(); !errors.Is(err, filepath.ErrBadPattern) {
		t.Errorf("Validate = %v, want it to wrap filepath.ErrBadPattern", err)
	}
}

func TestWorktreeMergeSet(t *testing.T) {
	t.Parallel()
	path := writeTemp(t, commented)
	for _, kv := range [][2]string{
		{"merge.strategy", "squash"},
		{"worktree.port_env", ""},
		{"merge.max_send_backs", "0"},
		{"merge.pr", "true"},
		{"merge.gate", "make test && make lint"},
		{"worktree.root", "/srv/wt"},
	} {
		if err := Set(path, kv[0], kv[1]); err != nil {
			t.Fatalf("Set(%q, %q): %v", kv[0], kv[1], err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantFile := commented + `merge:
  strategy: squash
  max_send_backs: 0
  pr: true
  gate: make test && make lint
worktree:
  port_env: ""
  root: /srv/wt
`
	if diff := cmp.Diff(wantFile, string(data)); diff != "" {
		t.Errorf("file after Set mismatch (-want +got):\n%s", diff)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load after Set: %v", err)
	}
	for key, want := range map[string]string{
		"merge.strategy":       "squash",
		"worktree.port_env":    `""`,
		"merge.max_send_backs": "0",
		"merge.pr":             "true",
		"merge.gate":           "make test && make lint",
		"worktree.root":        "/srv/wt",
		"merge.remote":         "origin",
	} {
		if got, err := Get(c, key); err != nil || got != want {
			t.Errorf("Get(%q) after Set = %q, %v; want %q", key, got, err, want)
		}
	}
	if c.Worktree.PortEnv != "" || c.Merge.Strategy != "squash" {
		t.Errorf("after Set: port_env %q, strategy %q; want \"\" and squash", c.Worktree.PortEnv, c.Merge.Strategy)
	}

	// Back to a port variable.
	if err := Set(path, "worktree.port_env", "APP_PORT"); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(path); err != nil || c.Worktree.PortEnv != "APP_PORT" {
		t.Errorf("port_env after Set = %q, %v; want APP_PORT", c.Worktree.PortEnv, err)
	}
}

func TestWorktreeMergeSetRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, before, key, value string
		wantKey, wantMsg         string
	}{
		{name: "unknown strategy", before: commented, key: "merge.strategy", value: "octopus",
			wantKey: "merge.strategy", wantMsg: `want one of rebase, merge, squash, got "octopus"`},
		{name: "bad port_env", before: commented, key: "worktree.port_env", value: "9PORT",
			wantKey: "worktree.port_env",
			wantMsg: `want an environment variable name (letters, digits and _, not starting with a digit) or "" for none, got "9PORT"`},
		{name: "empty remote with pr", before: "merge:\n  pr: true\n", key: "merge.remote", value: "",
			wantKey: "merge.remote", wantMsg: "must not be empty when pr is true"},
		{name: "bool", before: commented, key: "merge.cleanup", value: "sometimes",
			wantKey: "merge.cleanup", wantMsg: `want true or false, got "sometimes"`},
		{name: "list of sections", before: commented, key: "worktree.bootstrap", value: "x",
			wantKey: "worktree.bootstrap", wantMsg: "cannot be set from the command line; edit the file"},
		{name: "inside a bootstrap entry", before: "worktree:\n  bootstrap:\n    - {setup: make}\n", key: "worktree.bootstrap.0.setup", value: "x",
			wantKey: "worktree.bootstrap.0.setup", wantMsg: "is inside worktree.bootstrap, which cannot be set from the command line; edit the file"},
		{name: "section", before: commented, key: "worktree", value: "x",
			wantKey: "worktree", wantMsg: "is a section, not a setting; set one of: worktree.root, worktree.base, worktree.port_env, worktree.ignored_skip, worktree.parallel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeTemp(t, tt.before)
			err := Set(path, tt.key, tt.value)
			ce := asError(t, err)
			got := Error{File: ce.File, Line: ce.Line, Key: ce.Key, Msg: ce.Msg}
			want := Error{Key: tt.wantKey, Msg: tt.wantMsg}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Set error %q mismatch (-want +got):\n%s", err, diff)
			}
			if after, _ := os.ReadFile(path); string(after) != tt.before {
				t.Errorf("Set changed the file despite the error:\n%s", after)
			}
		})
	}
}

func TestBootstrapFor(t *testing.T) {
	t.Parallel()
	app := Bootstrap{Repo: "/src/app/", Copy: []string{".env"}, Setup: "npm ci", SetupTimeoutSecs: 30}
	lib := Bootstrap{Repo: "/src/lib", Setup: "make"}
	all := Bootstrap{Copy: []string{".env*"}}
	tests := []struct {
		name string
		w    Worktree
		repo string
		want Bootstrap
	}{
		{"exact", Worktree{Bootstrap: []Bootstrap{all, app, lib}}, "/src/lib", lib},
		{"cleaned on both sides", Worktree{Bootstrap: []Bootstrap{all, app, lib}}, "/src/./app", app},
		{"fallback to every repository", Worktree{Bootstrap: []Bootstrap{app, all, lib}}, "/src/other", all},
		{"prefix is not a match", Worktree{Bootstrap: []Bootstrap{app, all}}, "/src/app2", all},
		{"nothing matches", Worktree{Bootstrap: []Bootstrap{app, lib}}, "/src/other", Bootstrap{}},
		{"no entries", Worktree{}, "/src/app", Bootstrap{}},
		{"empty repo gets the general entry", Worktree{Bootstrap: []Bootstrap{app, all}}, "", all},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.w.BootstrapFor(tt.repo)); diff != "" {
			t.Errorf("%s: BootstrapFor(%q) mismatch (-want +got):\n%s", tt.name, tt.repo, diff)
		}
	}
	if got := (Bootstrap{}).SetupTimeout(); got != 600*time.Second {
		t.Errorf("zero SetupTimeout = %v, want 10m", got)
	}
	if got := app.SetupTimeout(); got != 30*time.Second {
		t.Errorf("SetupTimeout = %v, want 30s", got)
	}
}
