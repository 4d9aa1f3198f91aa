package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeys(t *testing.T) {
	t.Parallel()
	want := []string{
		"log.level",
		"daemon.shutdown_timeout_secs",
		"daemon.start_timeout_secs",
		"daemon.auto_start",
		"events.subscriber_buffer",
		"events.retention_days",
		"tasks.default_priority",
		"tasks.default_engine",
	}
	if diff := cmp.Diff(want, Keys()); diff != "" {
		t.Errorf("Keys mismatch (-want +got):\n%s", diff)
	}
}

// TestEveryKeyIsDocumented keeps docs/config.md in step with Config.
func TestEveryKeyIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys() {
		if !strings.Contains(string(doc), "`"+k+"`") {
			t.Errorf("docs/config.md does not document `%s`", k)
		}
	}
}

func TestDefaultIsValid(t *testing.T) {
	t.Parallel()
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(*Config)
		key    string
	}{
		{"bad level", func(c *Config) { c.Log.Level = "INFO" }, "log.level"},
		{"shutdown timeout too low", func(c *Config) { c.Daemon.ShutdownTimeoutSecs = 0 }, "daemon.shutdown_timeout_secs"},
		{"shutdown timeout too high", func(c *Config) { c.Daemon.ShutdownTimeoutSecs = 601 }, "daemon.shutdown_timeout_secs"},
		{"start timeout too high", func(c *Config) { c.Daemon.StartTimeoutSecs = 121 }, "daemon.start_timeout_secs"},
		{"buffer too small", func(c *Config) { c.Events.SubscriberBuffer = 15 }, "events.subscriber_buffer"},
		{"buffer too big", func(c *Config) { c.Events.SubscriberBuffer = 1_000_001 }, "events.subscriber_buffer"},
		{"negative retention", func(c *Config) { c.Events.RetentionDays = -1 }, "events.retention_days"},
		{"priority too high", func(c *Config) { c.Tasks.DefaultPriority = 5 }, "tasks.default_priority"},
		{"negative priority", func(c *Config) { c.Tasks.DefaultPriority = -1 }, "tasks.default_priority"},
		{"empty engine", func(c *Config) { c.Tasks.DefaultEngine = "" }, "tasks.default_engine"},
		{"engine with underscore", func(c *Config) { c.Tasks.DefaultEngine = "my_engine" }, "tasks.default_engine"},
		{"valid edges", func(c *Config) {
			c.Daemon = Daemon{ShutdownTimeoutSecs: 600, StartTimeoutSecs: 120}
			c.Events = Events{SubscriberBuffer: 16, RetentionDays: 0}
			c.Tasks = Tasks{DefaultPriority: 4, DefaultEngine: "a-1"}
		}, ""},
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
		})
	}
}

func TestGet(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Tasks.DefaultEngine = "007" // a string that looks like a number stays a string
	tests := []struct {
		key, want string
	}{
		{"log.level", "info"},
		{"daemon.shutdown_timeout_secs", "10"},
		{"daemon.auto_start", "true"},
		{"tasks.default_engine", `"007"`},
		{"daemon", "shutdown_timeout_secs: 10\nstart_timeout_secs: 10\nauto_start: true"},
		{"log", "level: info"},
	}
	for _, tt := range tests {
		got, err := Get(c, tt.key)
		if err != nil {
			t.Errorf("Get(%q): %v", tt.key, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Get(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestGetUnknown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key, msg string
	}{
		{"log.levl", `unknown key; did you mean "log.level"?`},
		{"level", `unknown key; did you mean "log.level"?`},
		{"daemon.shutdown", `unknown key; did you mean "daemon.shutdown_timeout_secs"?`},
		{"log.level.x", `unknown key; did you mean "log.level"?`},
		{"qqq", "unknown key; valid keys: " + strings.Join(Keys(), ", ")},
		{"", "unknown key; valid keys: " + strings.Join(Keys(), ", ")},
	}
	for _, tt := range tests {
		_, err := Get(Default(), tt.key)
		ce := asError(t, err)
		if diff := cmp.Diff(Error{Key: tt.key, Msg: tt.msg}, *ce); diff != "" {
			t.Errorf("Get(%q) error mismatch (-want +got):\n%s", tt.key, diff)
		}
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Log.Level = "warn"
	c.Events.RetentionDays = 3
	out, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "log:\n  level: warn\ndaemon:\n  shutdown_timeout_secs: 10\n") {
		t.Errorf("Marshal output does not start as expected:\n%s", out)
	}
	got, err := Load(writeTemp(t, string(out)))
	if err != nil {
		t.Fatalf("Load(Marshal(c)): %v", err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}
