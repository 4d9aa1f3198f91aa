package config

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSupervisionDefaults(t *testing.T) {
	t.Parallel()
	c := Default()
	want := MainWatcher{
		Enabled:             true,
		IntervalSecs:        30,
		NotificationUrgency: "helpful",
		CooldownSecs:        60,
		Fetch:               true,
		Remote:              "origin",
		NotifyUnrelated:     true,
		OnConflict:          "notify",
	}
	if diff := cmp.Diff(Supervision{MainWatcher: want, Watcher: DefaultWatcher(), Syncer: DefaultSyncer(), Sessions: DefaultSessions(), Overlap: Overlap{Enabled: true}}, c.Supervision); diff != "" {
		t.Errorf("Default().Supervision mismatch (-want +got):\n%s", diff)
	}
	for key, want := range map[string]string{
		"supervision.main_watcher.enabled":              "true",
		"supervision.main_watcher.interval_secs":        "30",
		"supervision.main_watcher.main_branch":          `""`,
		"supervision.main_watcher.notification_urgency": "helpful",
		"supervision.main_watcher.cooldown_secs":        "60",
		"supervision.main_watcher.fetch":                "true",
		"supervision.main_watcher.remote":               "origin",
		"supervision.main_watcher.notify_unrelated":     "true",
		"supervision.main_watcher.on_conflict":          "notify",
	} {
		if got, err := Get(c, key); err != nil || got != want {
			t.Errorf("Get(Default(), %q) = %q, %v; want %q", key, got, err, want)
		}
	}
	mw := c.Supervision.MainWatcher
	if mw.Interval() != 30*time.Second || mw.Cooldown() != time.Minute {
		t.Errorf("Interval, Cooldown = %v, %v; want 30s, 1m", mw.Interval(), mw.Cooldown())
	}
	if got := (MainWatcher{}).Cooldown(); got != 0 {
		t.Errorf("zero Cooldown = %v, want 0", got)
	}
}

func TestMainWatcherValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(*MainWatcher)
		key    string // full dotted key; "" for a valid configuration
		msg    string
	}{
		{"interval zero", func(m *MainWatcher) { m.IntervalSecs = 0 },
			"supervision.main_watcher.interval_secs", "want 1 to 86400, got 0"},
		{"interval too high", func(m *MainWatcher) { m.IntervalSecs = 86401 },
			"supervision.main_watcher.interval_secs", "want 1 to 86400, got 86401"},
		{"main branch like an option", func(m *MainWatcher) { m.MainBranch = "--all" },
			"supervision.main_watcher.main_branch", `must not start with -, got "--all"`},
		{"main branch with a space", func(m *MainWatcher) { m.MainBranch = "my main" },
			"supervision.main_watcher.main_branch", `must not contain spaces or control characters, got "my main"`},
		{"unknown urgency", func(m *MainWatcher) { m.NotificationUrgency = "urgent" },
			"supervision.main_watcher.notification_urgency", `want one of fyi, helpful, blocking, got "urgent"`},
		{"empty urgency", func(m *MainWatcher) { m.NotificationUrgency = "" },
			"supervision.main_watcher.notification_urgency", `want one of fyi, helpful, blocking, got ""`},
		{"urgency is case-sensitive", func(m *MainWatcher) { m.NotificationUrgency = "Blocking" },
			"supervision.main_watcher.notification_urgency", `want one of fyi, helpful, blocking, got "Blocking"`},
		{"negative cooldown", func(m *MainWatcher) { m.CooldownSecs = -1 },
			"supervision.main_watcher.cooldown_secs", "want 0 to 86400, got -1"},
		{"cooldown too high", func(m *MainWatcher) { m.CooldownSecs = 86401 },
			"supervision.main_watcher.cooldown_secs", "want 0 to 86400, got 86401"},
		{"remote like an option", func(m *MainWatcher) { m.Remote = "-u" },
			"supervision.main_watcher.remote", `must not start with -, got "-u"`},
		{"remote with a tab", func(m *MainWatcher) { m.Remote = "up\tstream" },
			"supervision.main_watcher.remote", `must not contain spaces or control characters, got "up\tstream"`},
		{"remote with a slash", func(m *MainWatcher) { m.Remote = "origin/main" },
			"supervision.main_watcher.remote", `want a remote name without /, or "" for the local branch only, got "origin/main"`},
		{"unknown conflict action", func(m *MainWatcher) { m.OnConflict = "abort" },
			"supervision.main_watcher.on_conflict", `want one of notify, pause, got "abort"`},
		{"empty conflict action", func(m *MainWatcher) { m.OnConflict = "" },
			"supervision.main_watcher.on_conflict", `want one of notify, pause, got ""`},
		{"low edges", func(m *MainWatcher) {
			*m = MainWatcher{IntervalSecs: 1, NotificationUrgency: "fyi", CooldownSecs: 0, OnConflict: "pause"}
		}, "", ""},
		{"high edges", func(m *MainWatcher) {
			*m = MainWatcher{Enabled: true, IntervalSecs: 86400, MainBranch: "release/2.x", NotificationUrgency: "blocking",
				CooldownSecs: 86400, Fetch: true, Remote: "upstream", NotifyUnrelated: true, OnConflict: "notify"}
		}, "", ""},
		{"fetch without a remote is not an error", func(m *MainWatcher) { m.Fetch, m.Remote = true, "" }, "", ""},
		{"disabled is still checked", func(m *MainWatcher) { m.Enabled, m.IntervalSecs = false, 0 },
			"supervision.main_watcher.interval_secs", "want 1 to 86400, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			tt.modify(&c.Supervision.MainWatcher)
			err := c.Validate()
			if tt.key == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			ce := asError(t, err)
			got := Error{File: ce.File, Line: ce.Line, Key: ce.Key, Msg: ce.Msg}
			if diff := cmp.Diff(Error{Key: tt.key, Msg: tt.msg}, got); diff != "" {
				t.Errorf("Validate error %q mismatch (-want +got):\n%s", err, diff)
			}
		})
	}
}

func TestMainWatcherLoad(t *testing.T) {
	t.Parallel()
	got, err := Load(writeTemp(t, `# watch trunk quietly
supervision:
  main_watcher:
    main_branch: trunk
    notification_urgency: fyi
    remote: ''   # local only
`))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Default()
	want.Supervision.MainWatcher.MainBranch = "trunk"
	want.Supervision.MainWatcher.NotificationUrgency = "fyi"
	want.Supervision.MainWatcher.Remote = ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load mismatch (-want +got):\n%s", diff)
	}

	// Empty sections, and a bare key, keep the defaults.
	for _, yaml := range []string{"supervision:\n", "supervision:\n  main_watcher:\n", "supervision:\n  main_watcher:\n    remote:\n"} {
		if c, err := Load(writeTemp(t, yaml)); err != nil || c.Supervision != Default().Supervision {
			t.Errorf("Load(%q) = %+v, %v; want the default supervision", yaml, c.Supervision, err)
		}
	}
}

func TestMainWatcherLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		line       int
		key, msg   string
	}{
		{
			name: "unknown urgency", yaml: "supervision:\n  main_watcher:\n    enabled: true\n    notification_urgency: high\n",
			line: 4, key: "supervision.main_watcher.notification_urgency", msg: `want one of fyi, helpful, blocking, got "high"`,
		},
		{
			name: "interval out of range", yaml: "supervision:\n  main_watcher: {interval_secs: 0}\n",
			line: 2, key: "supervision.main_watcher.interval_secs", msg: "want 1 to 86400, got 0",
		},
		{
			name: "negative cooldown", yaml: "# c\nsupervision:\n  main_watcher:\n    cooldown_secs: -30\n",
			line: 4, key: "supervision.main_watcher.cooldown_secs", msg: "want 0 to 86400, got -30",
		},
		{
			name: "bad main branch", yaml: "supervision:\n  main_watcher:\n    main_branch: -main\n",
			line: 3, key: "supervision.main_watcher.main_branch", msg: `must not start with -, got "-main"`,
		},
		{
			name: "remote with a slash", yaml: "supervision:\n  main_watcher:\n    fetch: true\n    remote: origin/main\n",
			line: 4, key: "supervision.main_watcher.remote", msg: `want a remote name without /, or "" for the local branch only, got "origin/main"`,
		},
		{
			name: "unknown conflict action", yaml: "supervision:\n  main_watcher:\n    on_conflict: stop\n",
			line: 3, key: "supervision.main_watcher.on_conflict", msg: `want one of notify, pause, got "stop"`,
		},
		{
			name: "wrong type", yaml: "supervision:\n  main_watcher:\n    enabled: sometimes\n",
			line: 3, key: "supervision.main_watcher.enabled", msg: `want true or false, got "sometimes"`,
		},
		{
			name: "float interval", yaml: "supervision:\n  main_watcher:\n    interval_secs: 2.5\n",
			line: 3, key: "supervision.main_watcher.interval_secs", msg: "want an integer, got 2.5",
		},
		{
			name: "typo in main_watcher", yaml: "supervision:\n  main_watcher:\n    urgency: blocking\n",
			line: 3, key: "supervision.main_watcher.urgency",
			msg: "unknown key; valid keys in supervision.main_watcher: enabled, interval_secs, main_branch, notification_urgency, cooldown_secs, fetch, remote, notify_unrelated, on_conflict",
		},
		{
			name: "typo in supervision", yaml: "supervision:\n  main_watch:\n    enabled: false\n",
			line: 2, key: "supervision.main_watch",
			msg: `unknown key; did you mean "main_watcher"?; valid keys in supervision: main_watcher, watcher, syncer, sessions, overlap`,
		},
		{
			name: "main_watcher is a mapping", yaml: "supervision:\n  main_watcher: off\n",
			line: 2, key: "supervision.main_watcher", msg: `want a mapping, got "off"`,
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

func TestMainWatcherSet(t *testing.T) {
	t.Parallel()
	path := writeTemp(t, commented)
	for _, kv := range [][2]string{
		{"supervision.main_watcher.notification_urgency", "blocking"},
		{"supervision.main_watcher.enabled", "false"},
		{"supervision.main_watcher.interval_secs", "120"},
		{"supervision.main_watcher.main_branch", "trunk"},
		{"supervision.main_watcher.cooldown_secs", "0"},
		{"supervision.main_watcher.fetch", "no"},
		{"supervision.main_watcher.remote", ""},
		{"supervision.main_watcher.on_conflict", "pause"},
	} {
		if err := Set(path, kv[0], kv[1]); err != nil {
			t.Fatalf("Set(%q, %q): %v", kv[0], kv[1], err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantFile := commented + `supervision:
  main_watcher:
    notification_urgency: blocking
    enabled: false
    interval_secs: 120
    main_branch: trunk
    cooldown_secs: 0
    fetch: false
    remote: ""
    on_conflict: pause
`
	if diff := cmp.Diff(wantFile, string(data)); diff != "" {
		t.Errorf("file after Set mismatch (-want +got):\n%s", diff)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load after Set: %v", err)
	}
	want := MainWatcher{IntervalSecs: 120, MainBranch: "trunk", NotificationUrgency: "blocking", NotifyUnrelated: true, OnConflict: "pause"}
	if diff := cmp.Diff(want, c.Supervision.MainWatcher); diff != "" {
		t.Errorf("main_watcher after Set mismatch (-want +got):\n%s", diff)
	}

	// Back on, in place.
	if err := Set(path, "supervision.main_watcher.enabled", "true"); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(path); err != nil || !c.Supervision.MainWatcher.Enabled {
		t.Errorf("enabled after Set = %v, %v; want true", c.Supervision.MainWatcher.Enabled, err)
	}
}

func TestMainWatcherSetRejects(t *testing.T) {
	t.Parallel()
	const watched = "supervision:\n  main_watcher:\n    enabled: true # on\n"
	tests := []struct {
		name, before, key, value string
		wantKey, wantMsg         string
	}{
		{name: "unknown urgency", before: watched, key: "supervision.main_watcher.notification_urgency", value: "asap",
			wantKey: "supervision.main_watcher.notification_urgency", wantMsg: `want one of fyi, helpful, blocking, got "asap"`},
		{name: "unknown urgency in a new file section", before: commented, key: "supervision.main_watcher.notification_urgency", value: "",
			wantKey: "supervision.main_watcher.notification_urgency", wantMsg: `want one of fyi, helpful, blocking, got ""`},
		{name: "unknown conflict action", before: watched, key: "supervision.main_watcher.on_conflict", value: "rebase",
			wantKey: "supervision.main_watcher.on_conflict", wantMsg: `want one of notify, pause, got "rebase"`},
		{name: "interval out of range", before: watched, key: "supervision.main_watcher.interval_secs", value: "0",
			wantKey: "supervision.main_watcher.interval_secs", wantMsg: "want 1 to 86400, got 0"},
		{name: "interval not an integer", before: watched, key: "supervision.main_watcher.interval_secs", value: "30s",
			wantKey: "supervision.main_watcher.interval_secs", wantMsg: `want an integer, got "30s"`},
		{name: "enabled not a bool", before: watched, key: "supervision.main_watcher.enabled", value: "maybe",
			wantKey: "supervision.main_watcher.enabled", wantMsg: `want true or false, got "maybe"`},
		{name: "remote with a slash", before: watched, key: "supervision.main_watcher.remote", value: "origin/main",
			wantKey: "supervision.main_watcher.remote", wantMsg: `want a remote name without /, or "" for the local branch only, got "origin/main"`},
		{name: "misspelt key", before: watched, key: "supervision.main_watcher.notification_urgncy", value: "fyi",
			wantKey: "supervision.main_watcher.notification_urgncy", wantMsg: `unknown key; did you mean "supervision.main_watcher.notification_urgency"?`},
		{name: "section", before: watched, key: "supervision.main_watcher", value: "off",
			wantKey: "supervision.main_watcher",
			wantMsg: "is a section, not a setting; set one of: supervision.main_watcher.enabled, supervision.main_watcher.interval_secs, " +
				"supervision.main_watcher.main_branch, supervision.main_watcher.notification_urgency, supervision.main_watcher.cooldown_secs, " +
				"supervision.main_watcher.fetch, supervision.main_watcher.remote, supervision.main_watcher.notify_unrelated, supervision.main_watcher.on_conflict"},
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

func TestWatcherValidate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		edit func(*Watcher)
		key  string
	}{
		{"interval", func(w *Watcher) { w.IntervalSecs = 0 }, "interval_secs"},
		{"repeat", func(w *Watcher) { w.Repeat = 1 }, "repeat"},
		{"dense_of not above dense", func(w *Watcher) { w.DenseOf = w.Dense }, "dense_of"},
		{"runaway tokens", func(w *Watcher) { w.RunawayTokens = 10 }, "runaway_tokens"},
		{"runaway usd", func(w *Watcher) { w.RunawayUSD = 0 }, "runaway_usd"},
		{"similarity", func(w *Watcher) { w.Similarity = 1.5 }, "similarity"},
		{"tier2 rate", func(w *Watcher) { w.Tier2EverySecs = 5 }, "tier2_every_secs"},
		{"nudges", func(w *Watcher) { w.Nudges = 0 }, "nudges"},
		{"hard usd", func(w *Watcher) { w.HardUSD = -1 }, "hard_usd"},
	} {
		w := DefaultWatcher()
		tt.edit(&w)
		err := w.Validate()
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tt.key {
			t.Errorf("%s: Validate() = %v, want an error for %s", tt.name, err, tt.key)
		}
	}
	if err := DefaultWatcher().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	path := writeTemp(t, "supervision:\n  watcher:\n    similarity: 2\n")
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path+":3: supervision.watcher.similarity") {
		t.Errorf("Load = %v, want the file, line 3 and the key", err)
	}
}
