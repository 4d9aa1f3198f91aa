package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want func(*Config)
	}{
		{name: "empty file", yaml: "", want: func(*Config) {}},
		{name: "only comments", yaml: "# nothing here\n", want: func(*Config) {}},
		{name: "null document", yaml: "~\n", want: func(*Config) {}},
		{name: "empty sections keep defaults", yaml: "daemon:\nlog:\n", want: func(*Config) {}},
		{
			name: "partial file keeps defaults",
			yaml: "# mine\ndaemon:\n  shutdown_timeout_secs: 30\ntasks:\n  default_engine: claude\n",
			want: func(c *Config) {
				c.Daemon.ShutdownTimeoutSecs = 30
				c.Tasks.DefaultEngine = "claude"
			},
		},
		{
			name: "every key",
			yaml: `log: {level: debug}
daemon: {shutdown_timeout_secs: 600, start_timeout_secs: 1, auto_start: false}
events: {subscriber_buffer: 16, retention_days: 30}
tasks: {default_priority: 0, default_engine: my-engine-2}
executor: {max_concurrent: 16}
agent: {max_iterations: 50, max_tool_failures: 3, no_progress_secs: 60, bash_timeout_secs: 30, max_bash_timeout_secs: 60, max_tool_output_bytes: 4096, deny_commands: ["\\bterraform\\s+destroy\\b"], env_allow: [GOPATH, CARGO_HOME]}
budget: {task_usd: 2.5, daily_usd: 20, fleet_usd: 100}
sandbox: {enabled: true, require: true, write: [~/.cache/go-build], deny_read: [/srv/keys], network: [443], tools: [Read, Bash], model_pass: true, recovery: interactive, max_escalations: 1, idle_timeout_secs: 60, total_timeout_secs: 600}
worktree:
  root: /srv/worktrees
  base: develop
  port_env: ""
  bootstrap:
    - {repo: /src/app, copy: [.env, "config/*.local"], setup: make deps, setup_timeout_secs: 60}
    - {copy: [.env*]}
merge: {auto: false, strategy: squash, gate: make test, gate_timeout_secs: 60, max_send_backs: 0, author_name: Bot, author_email: bot@example.com, pr: true, remote: upstream, cleanup: false}
supervision:
  main_watcher: {enabled: false, interval_secs: 5, main_branch: trunk, notification_urgency: blocking, cooldown_secs: 0, fetch: false, remote: "", notify_unrelated: true, on_conflict: pause}
  watcher:
    {enabled: false, interval_secs: 2, window_steps: 50, grace_steps: 0, repeat: 5, failing: 4, monologue: 4, alternation: 8,
     dense: 6, dense_of: 12, context_errors: 2, empty_replies: 4, apologies: 5, no_progress_secs: 120, runaway_tokens: 5000,
     runaway_usd: 0.5, wandering: 40, wandering_act: 80, persist: 9, same_failure: 6, talk: 6, model_errors: 5, reask: 4, circles: 5,
     similarity: 0.8, loose: 0.75, tier2: false, tier2_every_secs: 0, tier2_timeout_secs: 10, nudges: 2,
     steps_to_heed: 4, escalate: false, pause: false, abort: true, hard_tokens: 90000, hard_usd: 9}
  syncer:
    {enabled: false, interval_secs: 30, same_parent: false, shared_tags: false, same_files: false, same_group: false,
     relay_blocking: related, relay_helpful: same-parent, relay_fyi: never, min_relevance: 0.5, max_per_minute: 10,
     cooldown_secs: 0, max_pending: 50, pending_ttl_secs: 1200, persona: false, persona_timeout_secs: 40, llm_extract: true,
     extract_errors: false, extract_discoveries: false, extract_statements: false, dedup_similarity: 0.9, brief: 0,
     max_message_chars: 1000}
  sessions: {enabled: false, settle_secs: 7, min_interval_secs: 0, evaluate_timeout_secs: 9, max_tokens: 100}
llm:
  providers:
    anthropic: {base_url: "https://a.example", api_key_env: A_KEY, max_concurrent: 0, requests_per_minute: 1, tokens_per_minute: 2, max_output_tokens: 3}
    openai: {base_url: "http://localhost:11434/v1", api_key_env: "", api: responses, max_concurrent: 4, requests_per_minute: 5, tokens_per_minute: 6, max_output_tokens: 7}
    gemini: {base_url: "http://127.0.0.1:9", api_key_env: G_KEY, api: "", max_concurrent: 9, requests_per_minute: 10, tokens_per_minute: 11, max_output_tokens: 12}
  tiers:
    router: {provider: openai, model: llama3.2}
    worker: {provider: anthropic, model: claude-sonnet-4-5}
    expert: {provider: "", model: ""}
  retry: {max_attempts: 0, base_delay_ms: 0, max_delay_ms: 0}
  stream_idle_timeout_secs: 0
  models:
    - {name: llama3.2, provider: openai, context_window: 128000, input_per_mtok: 0.5, output_per_mtok: 1, cache_write_per_mtok: 0.25, cache_read_per_mtok: 0.125}
web: {enabled: true, listen: "[::1]:0", tls_cert: "", tls_key: ""}
`,
			want: func(c *Config) {
				*c = Config{
					Log:      Log{Level: "debug"},
					Daemon:   Daemon{ShutdownTimeoutSecs: 600, StartTimeoutSecs: 1, AutoStart: false},
					Events:   Events{SubscriberBuffer: 16, RetentionDays: 30},
					Tasks:    Tasks{DefaultPriority: 0, DefaultEngine: "my-engine-2"},
					Executor: Executor{MaxConcurrent: 16},
					Agent: Agent{MaxIterations: 50, MaxToolFailures: 3, NoProgressSecs: 60, BashTimeoutSecs: 30, MaxBashTimeoutSecs: 60,
						MaxToolOutputBytes: 4096, DenyCommands: []string{`\bterraform\s+destroy\b`}, EnvAllow: []string{"GOPATH", "CARGO_HOME"}},
					Budget: Budget{TaskUSD: 2.5, DailyUSD: 20, FleetUSD: 100},
					Sandbox: Sandbox{Enabled: true, Require: true, Write: []string{"~/.cache/go-build"}, DenyRead: []string{"/srv/keys"}, Network: Network{Ports: []int{443}},
						Tools: []string{"Read", "Bash"}, ModelPass: true, Recovery: "interactive", MaxEscalations: 1, IdleTimeoutSecs: 60, TotalTimeoutSecs: 600},
					Worktree: Worktree{Root: "/srv/worktrees", Base: "develop", IgnoredSkip: DefaultIgnoredSkip, Bootstrap: []Bootstrap{
						{Repo: "/src/app", Copy: []string{".env", "config/*.local"}, Setup: "make deps", SetupTimeoutSecs: 60},
						{Copy: []string{".env*"}},
					}},
					Merge: Merge{Strategy: "squash", Gate: "make test", GateTimeoutSecs: 60, AuthorName: "Bot",
						AuthorEmail: "bot@example.com", PR: true, Remote: "upstream"},
					Notify: Notify{DebounceSecs: 30, TimeoutSecs: 10},
					Supervision: Supervision{MainWatcher: MainWatcher{IntervalSecs: 5, MainBranch: "trunk",
						NotificationUrgency: "blocking", NotifyUnrelated: true, OnConflict: "pause"},
						Watcher: Watcher{IntervalSecs: 2, WindowSteps: 50, Repeat: 5, Failing: 4, Monologue: 4, Alternation: 8,
							Dense: 6, DenseOf: 12, ContextErrors: 2, EmptyReplies: 4, Apologies: 5, NoProgressSecs: 120, RunawayTokens: 5000,
							RunawayUSD: 0.5, Wandering: 40, WanderingAct: 80, Persist: 9, SameFailure: 6, Talk: 6, ModelErrors: 5, Reask: 4, Circles: 5,
							Similarity: 0.8, Loose: 0.75, Tier2TimeoutSecs: 10, Nudges: 2, StepsToHeed: 4,
							Abort: true, HardTokens: 90000, HardUSD: 9},
						Syncer: Syncer{IntervalSecs: 30, RelayBlocking: "related", RelayHelpful: "same-parent", RelayFYI: "never",
							MinRelevance: 0.5, MaxPerMinute: 10, MaxPending: 50, PendingTTLSecs: 1200, PersonaTimeoutSecs: 40,
							LLMExtract: true, DedupSimilarity: 0.9, MaxMessageChars: 1000},
						Sessions: Sessions{SettleSecs: 7, EvaluateTimeoutSecs: 9, MaxTokens: 100}, Overlap: Overlap{Enabled: true}},
					LLM: llm.Config{
						Providers: llm.ProvidersConfig{
							Anthropic: llm.ProviderConfig{BaseURL: "https://a.example", APIKeyEnv: "A_KEY", RequestsPerMinute: 1, TokensPerMinute: 2, MaxOutputTokens: 3},
							OpenAI:    llm.ProviderConfig{BaseURL: "http://localhost:11434/v1", API: llm.APIResponses, MaxConcurrent: 4, RequestsPerMinute: 5, TokensPerMinute: 6, MaxOutputTokens: 7},
							Gemini:    llm.ProviderConfig{BaseURL: "http://127.0.0.1:9", APIKeyEnv: "G_KEY", MaxConcurrent: 9, RequestsPerMinute: 10, TokensPerMinute: 11, MaxOutputTokens: 12},
						},
						Tiers: llm.TiersConfig{
							Router: llm.TierConfig{Provider: "openai", Model: "llama3.2"},
							Worker: llm.TierConfig{Provider: "anthropic", Model: "claude-sonnet-4-5"},
						},
						Models: []llm.ModelConfig{{
							Name: "llama3.2", Provider: "openai", ContextWindow: 128_000,
							InputPerMTok: 0.5, OutputPerMTok: 1, CacheWritePerMTok: 0.25, CacheReadPerMTok: 0.125,
						}},
					},
					Web:     Web{Enabled: true, Listen: "[::1]:0"},
					Cluster: DefaultCluster(),
				}
			},
		},
		{
			name: "empty llm lists keep the nil default",
			yaml: "llm:\n  models: []\n  tiers: {}\n",
			want: func(*Config) {},
		},
		{
			name: "an anchor under an unknown key is still an unknown key",
			yaml: "x: &t 20\ndaemon:\n  auto_start: off\n  shutdown_timeout_secs: *t\n",
			want: nil,
		},
		{
			name: "anchor inside known keys",
			yaml: "daemon:\n  auto_start: off\n  shutdown_timeout_secs: &t 20\n  start_timeout_secs: *t\n",
			want: func(c *Config) {
				c.Daemon.AutoStart = false
				c.Daemon.ShutdownTimeoutSecs = 20
				c.Daemon.StartTimeoutSecs = 20
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Load(writeTemp(t, tt.yaml))
			if tt.want == nil {
				if err == nil {
					t.Fatalf("Load = %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := Default()
			tt.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	got, err := Load(filepath.Join(t.TempDir(), "nope", "neuraphage.yaml"))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff(Default(), got); diff != "" {
		t.Errorf("Load of a missing file mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		yaml    string
		line    int
		key     string
		msgHas  []string // fragments of Msg
		msgFull string   // exact Msg, when set
	}{
		{
			name: "unknown top-level key", yaml: "log:\n  level: info\nlogs: {}\n",
			line: 3, key: "logs",
			msgFull: `unknown key; did you mean "log"?; valid keys at the top level: log, daemon, events, tasks, executor, agent, budget, sandbox, engines, worktree, merge, supervision, notify, hooks, llm, mcp, web, cluster`,
		},
		{
			name: "unknown nested key", yaml: "daemon:\n  auto_start: true\n  shutdown_timeout: 5\n",
			line: 3, key: "daemon.shutdown_timeout",
			msgFull: `unknown key; did you mean "shutdown_timeout_secs"?; valid keys in daemon: shutdown_timeout_secs, start_timeout_secs, auto_start`,
		},
		{
			name: "unknown key with no close match", yaml: "tasks:\n  zzz: 1\n",
			line: 2, key: "tasks.zzz",
			msgFull: "unknown key; valid keys in tasks: default_priority, default_engine",
		},
		{
			name: "wrong type string for int", yaml: "daemon:\n  shutdown_timeout_secs: ten\n",
			line: 2, key: "daemon.shutdown_timeout_secs", msgFull: `want an integer, got "ten"`,
		},
		{
			name: "float for int is not truncated", yaml: "tasks:\n  default_priority: 1.5\n",
			line: 2, key: "tasks.default_priority", msgFull: "want an integer, got 1.5",
		},
		{
			name: "integer out of range", yaml: "events:\n  retention_days: 18446744073709551615\n",
			line: 2, key: "events.retention_days", msgHas: []string{"out of range"},
		},
		{
			name: "wrong type for bool", yaml: "daemon:\n  auto_start: maybe\n",
			line: 2, key: "daemon.auto_start", msgFull: `want true or false, got "maybe"`,
		},
		{
			name: "list for scalar", yaml: "log:\n  level: [debug]\n",
			line: 2, key: "log.level", msgFull: "want a string, got a list",
		},
		{
			name: "scalar for section", yaml: "\n\ndaemon: 5\n",
			line: 3, key: "daemon", msgFull: "want a mapping, got 5",
		},
		{
			name: "top level is not a mapping", yaml: "- a\n- b\n",
			line: 1, key: "", msgFull: "want a mapping, got a list",
		},
		{
			name: "env_allow refuses a key", yaml: "agent:\n  env_allow:\n    - GOPATH\n    - OPENAI_API_KEY\n",
			line: 4, key: "agent.env_allow.1", msgHas: []string{"OPENAI_API_KEY looks like a key or token"},
		},
		{
			name: "env_allow refuses a token", yaml: "agent:\n  env_allow: [GH_TOKEN]\n",
			line: 2, key: "agent.env_allow.0", msgHas: []string{"secrets never reach"},
		},
		{
			name: "env_allow refuses the daemon's own", yaml: "agent:\n  env_allow: [NEURAPHAGE_HOME]\n",
			line: 2, key: "agent.env_allow.0", msgHas: []string{"the daemon's own variable"},
		},
		{
			name: "env_allow wants names", yaml: "agent:\n  env_allow: [\"A=B\"]\n",
			line: 2, key: "agent.env_allow.0", msgHas: []string{"want an environment variable name"},
		},
		{
			name: "invalid value carries its line", yaml: "# c\ntasks:\n  default_engine: native\n  default_priority: 7\n",
			line: 4, key: "tasks.default_priority", msgFull: "want 0 to 4, got 7",
		},
		{
			name: "invalid log level", yaml: "log:\n  level: verbose\n",
			line: 2, key: "log.level", msgFull: `want one of debug, info, warn, error, got "verbose"`,
		},
		{
			name: "invalid engine", yaml: "tasks:\n  default_engine: Claude Code\n",
			line: 2, key: "tasks.default_engine", msgHas: []string{"lowercase", `"Claude Code"`},
		},
		{
			name: "empty engine", yaml: "tasks:\n  default_engine: ''\n",
			line: 2, key: "tasks.default_engine", msgFull: "must not be empty",
		},
		{
			name: "second daemon check is reported too", yaml: "daemon:\n  start_timeout_secs: 0\n",
			line: 2, key: "daemon.start_timeout_secs", msgFull: "want 1 to 120, got 0",
		},
		{
			name: "duplicate key", yaml: "log:\n  level: info\n  level: debug\n",
			line: 3, key: "log.level", msgFull: "duplicate key (first set at line 2)",
		},
		{
			name: "merge keys", yaml: "base: &b {level: info}\nlog:\n  <<: *b\n",
			line: 1, key: "base", msgHas: []string{"unknown key"},
		},
		{
			name: "merge keys in a known section", yaml: "log:\n  <<: {level: info}\n",
			line: 2, key: "log", msgHas: []string{"merge keys"},
		},
		{
			name: "unclosed flow sequence", yaml: "log:\n  level: info\ndaemon: [1\n",
			line: 3, msgHas: []string{"invalid YAML", "did not find expected"},
		},
		{
			name: "syntax error mid-file", yaml: "a: 1\nb: c: d\n",
			line: 2, msgFull: "invalid YAML: mapping values are not allowed in this context",
		},
		{
			name: "bad indentation", yaml: "log:\n  level: info\n bad: 1\n",
			line: 3, msgFull: "invalid YAML: did not find expected key",
		},
		{
			name: "parser error on the first line", yaml: "a: [1, 2}\n",
			line: 1, msgFull: "invalid YAML: did not find expected ',' or ']'",
		},
		{
			name: "parser error on a later line", yaml: "- a\nb: 1\n",
			line: 2, msgFull: "invalid YAML: did not find expected '-' indicator",
		},
		{
			name: "scanner error on the first line", yaml: "\t a: 1\n",
			line: 0, msgFull: "invalid YAML: found character that cannot start any token",
		},
		{
			name: "tab indentation", yaml: "log:\n\tlevel: info\n",
			line: 2, msgHas: []string{"invalid YAML"},
		},
		{
			name: "two documents", yaml: "log: {level: info}\n---\nlog: {level: debug}\n",
			line: 2, msgFull: "a second YAML document; want exactly one",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeTemp(t, tt.yaml)
			_, err := Load(path)
			ce := asError(t, err)
			got := Error{File: ce.File, Line: ce.Line, Key: ce.Key}
			want := Error{File: path, Line: tt.line, Key: tt.key}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load(%q) error %q location mismatch (-want +got):\n%s", tt.yaml, err, diff)
			}
			if tt.msgFull != "" && ce.Msg != tt.msgFull {
				t.Errorf("Msg = %q, want %q", ce.Msg, tt.msgFull)
			}
			for _, s := range tt.msgHas {
				if !strings.Contains(ce.Msg, s) {
					t.Errorf("Msg = %q, want it to contain %q", ce.Msg, s)
				}
			}
			if !strings.HasPrefix(err.Error(), path+":") {
				t.Errorf("Error() = %q, want it to start with the file name", err)
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root can read a mode 000 file")
	}
	path := writeTemp(t, "log: {level: info}\n")
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	ce := asError(t, err)
	if ce.File != path || !errors.Is(err, os.ErrPermission) {
		t.Errorf("Load error = %q (File %q), want a permission error naming %s", err, ce.File, path)
	}
}

func TestLoadDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Load(dir)
	if ce := asError(t, err); ce.File != dir || !strings.Contains(ce.Msg, "reading config file") {
		t.Errorf("Load(dir) error = %q, want a read error naming %s", err, dir)
	}
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	cause := errors.New("boom")
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{File: "f.yaml", Line: 3, Key: "log.level", Msg: "bad"}, "f.yaml:3: log.level: bad"},
		{&Error{File: "f.yaml", Key: "log.level", Msg: "bad"}, "f.yaml: log.level: bad"},
		{&Error{Key: "log.level", Msg: "bad"}, "log.level: bad"},
		{&Error{File: "f.yaml", Line: 2, Msg: "bad"}, "f.yaml:2: bad"},
		{&Error{File: "f.yaml", Err: cause}, "f.yaml: boom"},
		{&Error{Msg: "bad", Err: cause}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	if !errors.Is(&Error{Err: cause}, cause) {
		t.Error("errors.Is does not see the cause")
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "neuraphage.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func asError(t *testing.T, err error) *Error {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v (%T), want *Error", err, err)
	}
	return ce
}
