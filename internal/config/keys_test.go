package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/llm"
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
		"executor.max_concurrent",
		"agent.max_iterations",
		"agent.max_tool_failures",
		"agent.no_progress_secs",
		"agent.bash_timeout_secs",
		"agent.max_bash_timeout_secs",
		"agent.max_tool_output_bytes",
		"agent.deny_commands",
		"agent.env_allow",
		"budget.task_usd",
		"budget.daily_usd",
		"budget.fleet_usd",
		"sandbox.enabled", "sandbox.require", "sandbox.write", "sandbox.deny_read", "sandbox.network",
		"sandbox.tools", "sandbox.model_pass", "sandbox.recovery", "sandbox.max_escalations",
		"sandbox.idle_timeout_secs", "sandbox.total_timeout_secs",
		"engines.claude.command",
		"engines.claude.args",
		"engines.claude.permission_mode",
		"engines.claude.allowed_tools",
		"engines.codex.command",
		"engines.codex.args",
		"engines.gemini.command",
		"engines.gemini.args",
		"engines.gemini.model",
		"worktree.root",
		"worktree.base",
		"worktree.port_env",
		"worktree.ignored_skip",
		"worktree.parallel",
		// worktree.bootstrap is a list of sections: edited in the file.
		"merge.auto",
		"merge.strategy",
		"merge.gate",
		"merge.gate_timeout_secs",
		"merge.max_send_backs",
		"merge.author_name",
		"merge.author_email",
		"merge.pr",
		"merge.remote",
		"merge.cleanup",
		"supervision.main_watcher.enabled",
		"supervision.main_watcher.interval_secs",
		"supervision.main_watcher.main_branch",
		"supervision.main_watcher.notification_urgency",
		"supervision.main_watcher.cooldown_secs",
		"supervision.main_watcher.fetch",
		"supervision.main_watcher.remote",
		"supervision.main_watcher.notify_unrelated",
		"supervision.main_watcher.on_conflict",
		"supervision.watcher.enabled",
		"supervision.watcher.interval_secs",
		"supervision.watcher.window_steps",
		"supervision.watcher.grace_steps",
		"supervision.watcher.repeat",
		"supervision.watcher.failing",
		"supervision.watcher.monologue",
		"supervision.watcher.alternation",
		"supervision.watcher.dense",
		"supervision.watcher.dense_of",
		"supervision.watcher.context_errors",
		"supervision.watcher.empty_replies",
		"supervision.watcher.apologies",
		"supervision.watcher.no_progress_secs",
		"supervision.watcher.runaway_tokens",
		"supervision.watcher.runaway_usd",
		"supervision.watcher.wandering",
		"supervision.watcher.wandering_act",
		"supervision.watcher.persist",
		"supervision.watcher.same_failure",
		"supervision.watcher.talk",
		"supervision.watcher.model_errors",
		"supervision.watcher.reask",
		"supervision.watcher.circles",
		"supervision.watcher.similarity",
		"supervision.watcher.loose",
		"supervision.watcher.tier2",
		"supervision.watcher.tier2_every_secs",
		"supervision.watcher.tier2_timeout_secs",
		"supervision.watcher.nudges",
		"supervision.watcher.steps_to_heed",
		"supervision.watcher.escalate",
		"supervision.watcher.pause",
		"supervision.watcher.abort",
		"supervision.watcher.hard_tokens",
		"supervision.watcher.hard_usd",
		"supervision.syncer.enabled",
		"supervision.syncer.interval_secs",
		"supervision.syncer.same_parent",
		"supervision.syncer.shared_tags",
		"supervision.syncer.same_files",
		"supervision.syncer.same_group",
		"supervision.syncer.relay_blocking",
		"supervision.syncer.relay_helpful",
		"supervision.syncer.relay_fyi",
		"supervision.syncer.min_relevance",
		"supervision.syncer.max_per_minute",
		"supervision.syncer.cooldown_secs",
		"supervision.syncer.max_pending",
		"supervision.syncer.pending_ttl_secs",
		"supervision.syncer.persona",
		"supervision.syncer.persona_timeout_secs",
		"supervision.syncer.llm_extract",
		"supervision.syncer.extract_errors",
		"supervision.syncer.extract_discoveries",
		"supervision.syncer.extract_statements",
		"supervision.syncer.dedup_similarity",
		"supervision.syncer.brief",
		"supervision.syncer.max_message_chars",
		"supervision.sessions.enabled",
		"supervision.sessions.settle_secs",
		"supervision.sessions.min_interval_secs",
		"supervision.sessions.evaluate_timeout_secs",
		"supervision.sessions.max_tokens",
		"supervision.overlap.enabled",
		"notify.command", "notify.webhook", "notify.desktop", "notify.debounce_secs", "notify.timeout_secs",
		"llm.providers.anthropic.base_url",
		"llm.providers.anthropic.api_key_env",
		"llm.providers.anthropic.api",
		"llm.providers.anthropic.max_concurrent",
		"llm.providers.anthropic.requests_per_minute",
		"llm.providers.anthropic.tokens_per_minute",
		"llm.providers.anthropic.max_output_tokens",
		"llm.providers.openai.base_url",
		"llm.providers.openai.api_key_env",
		"llm.providers.openai.api",
		"llm.providers.openai.max_concurrent",
		"llm.providers.openai.requests_per_minute",
		"llm.providers.openai.tokens_per_minute",
		"llm.providers.openai.max_output_tokens",
		"llm.providers.gemini.base_url",
		"llm.providers.gemini.api_key_env",
		"llm.providers.gemini.api",
		"llm.providers.gemini.max_concurrent",
		"llm.providers.gemini.requests_per_minute",
		"llm.providers.gemini.tokens_per_minute",
		"llm.providers.gemini.max_output_tokens",
		"llm.tiers.router.provider",
		"llm.tiers.router.model",
		"llm.tiers.worker.provider",
		"llm.tiers.worker.model",
		"llm.tiers.expert.provider",
		"llm.tiers.expert.model",
		"llm.retry.max_attempts",
		"llm.retry.base_delay_ms",
		"llm.retry.max_delay_ms",
		"llm.stream_idle_timeout_secs",
		"mcp.listen",
		"mcp.token_file",
		"web.enabled",
		"web.listen",
		"web.tls_cert",
		"web.tls_key",
		"cluster.enabled",
		"cluster.listen",
		"cluster.nats_url",
		"cluster.advertise",
		"cluster.tls_cert",
		"cluster.tls_key",
		"cluster.heartbeat_ms",
		"cluster.heartbeat_misses",
		"cluster.git_listen",
		"cluster.git_url",
		// llm.models is a list of sections: edited in the file, not by Set.
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
		{"notify webhook not a URL", func(c *Config) { c.Notify.Webhook = "ntfy.sh/topic" }, "notify.webhook"},
		{"notify timeout zero", func(c *Config) { c.Notify.TimeoutSecs = 0 }, "notify.timeout_secs"},
		{"notify debounce negative", func(c *Config) { c.Notify.DebounceSecs = -1 }, "notify.debounce_secs"},
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
		{"unknown tier provider", func(c *Config) { c.LLM.Tiers.Worker.Provider = "foo" }, "llm.tiers.worker.provider"},
		{"tier model without provider", func(c *Config) { c.LLM.Tiers.Expert.Model = "gpt-5" }, "llm.tiers.expert.provider"},
		{"negative retry", func(c *Config) { c.LLM.Retry.MaxAttempts = -1 }, "llm.retry.max_attempts"},
		{"catalogue entry without name", func(c *Config) {
			c.LLM.Models = []llm.ModelConfig{{Name: "m", Provider: "openai"}, {Provider: "openai"}}
		}, "llm.models.1.name"},
		{"valid edges", func(c *Config) {
			c.Daemon = Daemon{ShutdownTimeoutSecs: 600, StartTimeoutSecs: 120}
			c.Events = Events{SubscriberBuffer: 16, RetentionDays: 0}
			c.Tasks = Tasks{DefaultPriority: 4, DefaultEngine: "a-1"}
			c.LLM = llm.Config{} // every llm field has a usable zero value
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
		{"llm.providers.anthropic.api_key_env", "ANTHROPIC_API_KEY"},
		{"llm.retry", "max_attempts: 5\nbase_delay_ms: 500\nmax_delay_ms: 30000"},
		{"llm.models", "[]"},
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
	edited := Default()
	edited.Log.Level = "warn"
	edited.Events.RetentionDays = 3
	full := edited
	full.LLM = llm.Config{
		Providers: llm.ProvidersConfig{
			Anthropic: llm.ProviderConfig{BaseURL: "https://proxy.example/anthropic", APIKeyEnv: "MY_KEY", MaxConcurrent: 2, RequestsPerMinute: 50, TokensPerMinute: 40_000, MaxOutputTokens: 4096},
			OpenAI:    llm.ProviderConfig{BaseURL: "http://localhost:11434/v1"},
		},
		Tiers: llm.TiersConfig{
			Router: llm.TierConfig{Provider: "openai", Model: "llama3.2"},
			Worker: llm.TierConfig{Provider: "anthropic", Model: "claude-sonnet-4-5"},
		},
		Retry:                 llm.RetryConfig{MaxAttempts: 1, BaseDelayMs: 100, MaxDelayMs: 1000},
		StreamIdleTimeoutSecs: 30,
		Models: []llm.ModelConfig{
			{Name: "llama3.2", Provider: "openai", ContextWindow: 128_000},
			{Name: "claude-sonnet-4-5", Provider: "anthropic", ContextWindow: 200_000, InputPerMTok: 3, OutputPerMTok: 15, CacheWritePerMTok: 3.75, CacheReadPerMTok: 0.3},
		},
	}
	for _, tt := range []struct {
		name string
		c    Config
	}{
		// Default().LLM.Models is nil, which Marshal writes as [].
		{"defaults with edits", edited},
		{"every llm field set", full},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := Marshal(tt.c)
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
			if diff := cmp.Diff(tt.c, got); diff != "" {
				t.Errorf("round trip mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMarshalDefault pins what `neuraphage config show` prints with no file;
// docs/config.md shows the same text.
func TestMarshalDefault(t *testing.T) {
	t.Parallel()
	out, err := Marshal(Default())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := "The defaults, as `neuraphage config show` prints them with no file:\n\n```yaml\n" + string(out) + "```\n"
	if !strings.Contains(string(doc), block) {
		t.Errorf("docs/config.md does not show the defaults as Marshal(Default()) renders them:\n%s", out)
	}
}

// TestDocExamplesLoad checks that every YAML example in docs/config.md that
// sets Neuraphage keys is a valid configuration file.
func TestDocExamplesLoad(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```yaml\n")[1:]
	if len(blocks) < 3 {
		t.Fatalf("found %d YAML examples in docs/config.md, want at least 3", len(blocks))
	}
	for i, b := range blocks {
		body, _, ok := strings.Cut(b, "```")
		if !ok {
			t.Fatalf("YAML example %d is not closed", i)
		}
		if _, err := Load(writeTemp(t, body)); err != nil {
			t.Errorf("YAML example %d does not load: %v\n%s", i, err, body)
		}
	}
}
