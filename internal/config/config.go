package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// Config is the whole Neuraphage configuration. Every field has a default
// (see [Default]); the YAML names are the keys users write.
type Config struct {
	Log    Log    `yaml:"log"`
	Daemon Daemon `yaml:"daemon"`
	Events Events `yaml:"events"`
	Tasks  Tasks  `yaml:"tasks"`
	// Executor schedules tasks; Agent bounds the native agent loop; Budget
	// caps spending.
	Executor Executor `yaml:"executor"`
	Agent    Agent    `yaml:"agent"`
	Budget   Budget   `yaml:"budget"`
	// Sandbox confines the commands tasks run.
	Sandbox Sandbox `yaml:"sandbox"`
	// Engines configures the external agent CLIs (claude).
	Engines Engines `yaml:"engines"`
	// Worktree places each task's git worktree; Merge lands finished work.
	Worktree Worktree `yaml:"worktree"`
	Merge    Merge    `yaml:"merge"`
	// Supervision watches running tasks, such as telling them to rebase
	// when main moves.
	Supervision Supervision `yaml:"supervision"`
	// Notify sends attention signals (a task needs input, is paused,
	// failed, landed, its merge parked) to the user's channels
	// (docs/notify.md).
	Notify Notify `yaml:"notify"`
	// Hooks are the user's commands run at persona and supervision
	// decision points (docs/hooks.md).
	Hooks []Hook `yaml:"hooks"`
	// LLM is the model layer: providers, tiers, retry, the model catalogue.
	// Its keys are documented in docs/llm.md and summarized in docs/config.md.
	LLM llm.Config `yaml:"llm"`
	// MCP serves the Model Context Protocol over HTTP (docs/mcp.md).
	MCP MCP `yaml:"mcp"`
	// Web is the web dashboard (docs/web.md).
	Web Web `yaml:"web"`
	// Cluster runs tasks on workers over NATS JetStream (docs/cluster.md).
	Cluster Cluster `yaml:"cluster"`
}

// Log configures the daemon's logging.
type Log struct {
	Level string `yaml:"level"` // debug|info|warn|error; default info
}

// Daemon configures the daemon process and how the CLI starts it.
type Daemon struct {
	ShutdownTimeoutSecs int  `yaml:"shutdown_timeout_secs"` // default 10, 1..600
	StartTimeoutSecs    int  `yaml:"start_timeout_secs"`    // how long the CLI waits for an auto-started daemon; default 10, 1..120
	AutoStart           bool `yaml:"auto_start"`            // default true
}

// Events configures the event bus and the event log.
type Events struct {
	SubscriberBuffer int `yaml:"subscriber_buffer"` // droppable events queued per slow subscriber before drops; default 1024, 16..1_000_000
	RetentionDays    int `yaml:"retention_days"`    // 0 keeps the event log forever; default 0, >=0
}

// Tasks configures defaults for new tasks.
type Tasks struct {
	DefaultPriority int    `yaml:"default_priority"` // 0 (highest)..4; default 2
	DefaultEngine   string `yaml:"default_engine"`   // default "native"; non-empty, [a-z0-9-]+
}

// Executor configures the scheduler.
type Executor struct {
	MaxConcurrent int `yaml:"max_concurrent"` // tasks running at once; default 4, 1..10000
}

// Agent configures the native agent loop and its tools.
type Agent struct {
	MaxIterations      int      `yaml:"max_iterations"`        // model calls per task unless its budget says otherwise; default 200, 1..1_000_000
	MaxToolFailures    int      `yaml:"max_tool_failures"`     // tool calls failing in a row before the task pauses; default 8, 1..1000
	NoProgressSecs     int      `yaml:"no_progress_secs"`      // time without a successful tool call before the task pauses; default 900, 10..86400
	BashTimeoutSecs    int      `yaml:"bash_timeout_secs"`     // default timeout of a bash call; default 120, 1..86400
	MaxBashTimeoutSecs int      `yaml:"max_bash_timeout_secs"` // the most a bash call may ask for; default 1800, >= bash_timeout_secs
	MaxToolOutputBytes int      `yaml:"max_tool_output_bytes"` // tool output the model sees; default 32768, 1024..10_485_760
	DenyCommands       []string `yaml:"deny_commands"`         // extra Go regexps refused for bash, added to the built-in deny-list
	EnvAllow           []string `yaml:"env_allow"`             // more variables of the daemon's environment bash commands inherit; names only; never *_API_KEY, *_TOKEN or NEURAPHAGE_*
}

// Budget caps spending in US dollars. Zero means no cap.
type Budget struct {
	TaskUSD  float64 `yaml:"task_usd"`  // per task, unless the task sets its own; default 0
	DailyUSD float64 `yaml:"daily_usd"` // all tasks, per UTC day; default 0
	FleetUSD float64 `yaml:"fleet_usd"` // all tasks, ever (the whole cost ledger); default 0
}

// Default returns the configuration used when the file sets nothing.
// Each call returns a fresh value.
func Default() Config {
	return Config{
		Log: Log{Level: "info"},
		Daemon: Daemon{
			ShutdownTimeoutSecs: 10,
			StartTimeoutSecs:    10,
			AutoStart:           true,
		},
		Events: Events{
			SubscriberBuffer: 1024,
			RetentionDays:    0,
		},
		Tasks: Tasks{
			DefaultPriority: 2,
			DefaultEngine:   "native",
		},
		Executor: Executor{MaxConcurrent: 4},
		Agent: Agent{
			MaxIterations:      200,
			MaxToolFailures:    8,
			NoProgressSecs:     900,
			BashTimeoutSecs:    120,
			MaxBashTimeoutSecs: 1800,
			MaxToolOutputBytes: 32 << 10,
		},
		Sandbox:  DefaultSandbox(),
		Worktree: Worktree{PortEnv: "PORT", IgnoredSkip: slices.Clone(DefaultIgnoredSkip)},
		Merge: Merge{
			Auto:            true,
			Strategy:        "rebase",
			GateTimeoutSecs: 1800,
			MaxSendBacks:    3,
			Remote:          "origin",
			Cleanup:         true,
		},
		Supervision: Supervision{MainWatcher: MainWatcher{
			Enabled:             true,
			IntervalSecs:        30,
			NotificationUrgency: "helpful",
			CooldownSecs:        60,
			Fetch:               true,
			Remote:              "origin",
			NotifyUnrelated:     true,
			OnConflict:          "notify",
		}, Watcher: DefaultWatcher(), Syncer: DefaultSyncer(), Sessions: DefaultSessions(),
			Overlap: Overlap{Enabled: true}},
		Notify:  Notify{DebounceSecs: 30, TimeoutSecs: 10},
		LLM:     llm.DefaultConfig(),
		Web:     Web{Listen: DefaultWebListen},
		Cluster: DefaultCluster(),
	}
}

// Validate checks every value. It calls the Validate method of each section
// (see [Validator]) in declaration order and returns the first problem as an
// *Error with Key set to the full dotted key; File and Line are left empty.
func (c Config) Validate() error {
	return validateFields(reflect.ValueOf(c), "")
}

// validateFields validates the tagged fields of struct v, whose dotted path is
// prefix. It starts at the fields so that Config's own Validate is not called
// again.
func validateFields(v reflect.Value, prefix string) error {
	for _, f := range fieldsOf(v.Type()) {
		if err := validateValue(v.FieldByIndex(f.index), join(prefix, f.name)); err != nil {
			return err
		}
	}
	return nil
}

// validateValue calls Validate on the outermost Validator in v's tree.
func validateValue(v reflect.Value, key string) error {
	if val, ok := asValidator(v); ok {
		if err := val.Validate(); err != nil {
			return sectionError(key, err)
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return validateValue(v.Elem(), key)
		}
	case reflect.Struct:
		return validateFields(v, key)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := validateValue(v.Index(i), join(key, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			if err := validateValue(v.MapIndex(k), join(key, k.String())); err != nil {
				return err
			}
		}
	}
	return nil
}

// asValidator reports whether v, or a pointer to a copy of it, implements
// Validator. Only struct types are considered: a Validate method on a scalar
// type is the type's own business.
func asValidator(v reflect.Value) (Validator, bool) {
	if v.Kind() != reflect.Struct || !v.CanInterface() {
		return nil, false
	}
	if val, ok := v.Interface().(Validator); ok {
		return val, true
	}
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	val, ok := p.Interface().(Validator)
	return val, ok
}

// sectionError maps an error from the Validate method of the section at
// prefix to an *Error with the full dotted key.
func sectionError(prefix string, err error) *Error {
	err = firstError(err)
	var fe FieldError
	if errors.As(err, &fe) {
		key, msg := fe.ConfigField()
		cause := err
		if ce, ok := err.(*Error); ok {
			cause = ce.Err // an *Error from this package adds nothing as a cause
		}
		return &Error{Key: join(prefix, key), Msg: msg, Err: cause}
	}
	return &Error{Key: prefix, Msg: err.Error(), Err: err}
}

// firstError descends errors.Join trees to the first leaf error.
func firstError(err error) error {
	for {
		j, ok := err.(interface{ Unwrap() []error })
		if !ok {
			return err
		}
		errs := j.Unwrap()
		i := slices.IndexFunc(errs, func(e error) bool { return e != nil })
		if i < 0 {
			return err
		}
		err = errs[i]
	}
}

// Validate checks the log settings.
func (l Log) Validate() error {
	levels := []string{"debug", "info", "warn", "error"}
	if !slices.Contains(levels, l.Level) {
		return &Error{Key: "level", Msg: fmt.Sprintf("want one of %s, got %q", strings.Join(levels, ", "), l.Level)}
	}
	return nil
}

// Validate checks the daemon settings.
func (d Daemon) Validate() error {
	return errors.Join(
		checkRange("shutdown_timeout_secs", d.ShutdownTimeoutSecs, 1, 600),
		checkRange("start_timeout_secs", d.StartTimeoutSecs, 1, 120),
	)
}

// Validate checks the event settings.
func (e Events) Validate() error {
	if err := checkRange("subscriber_buffer", e.SubscriberBuffer, 16, 1_000_000); err != nil {
		return err
	}
	if e.RetentionDays < 0 {
		return &Error{Key: "retention_days", Msg: fmt.Sprintf("want 0 (keep forever) or more, got %d", e.RetentionDays)}
	}
	return nil
}

var engineName = regexp.MustCompile(`^[a-z0-9-]+$`)

// Validate checks the task defaults.
func (t Tasks) Validate() error {
	if err := checkRange("default_priority", t.DefaultPriority, 0, 4); err != nil {
		return err
	}
	switch {
	case t.DefaultEngine == "":
		return &Error{Key: "default_engine", Msg: "must not be empty"}
	case !engineName.MatchString(t.DefaultEngine):
		return &Error{Key: "default_engine", Msg: fmt.Sprintf("want lowercase letters, digits and dashes, got %q", t.DefaultEngine)}
	}
	return nil
}

// Validate checks the executor settings.
func (e Executor) Validate() error {
	return checkRange("max_concurrent", e.MaxConcurrent, 1, 10_000)
}

// Validate checks the agent settings.
func (a Agent) Validate() error {
	err := errors.Join(
		checkRange("max_iterations", a.MaxIterations, 1, 1_000_000),
		checkRange("max_tool_failures", a.MaxToolFailures, 1, 1000),
		checkRange("no_progress_secs", a.NoProgressSecs, 10, 86400),
		checkRange("bash_timeout_secs", a.BashTimeoutSecs, 1, 86400),
		checkRange("max_bash_timeout_secs", a.MaxBashTimeoutSecs, a.BashTimeoutSecs, 86400),
		checkRange("max_tool_output_bytes", a.MaxToolOutputBytes, 1024, 10<<20),
	)
	if err != nil {
		return err
	}
	for i, p := range a.DenyCommands {
		if _, err := regexp.Compile(p); err != nil {
			return &Error{Key: "deny_commands." + strconv.Itoa(i), Msg: fmt.Sprintf("not a Go regular expression: %v", err)}
		}
	}
	for i, name := range a.EnvAllow {
		key := "env_allow." + strconv.Itoa(i)
		u := strings.ToUpper(name)
		switch {
		case !envName.MatchString(name):
			return &Error{Key: key, Msg: fmt.Sprintf("want an environment variable name (letters, digits and _, not starting with a digit), got %q", name)}
		case strings.HasPrefix(u, "NEURAPHAGE_"):
			return &Error{Key: key, Msg: fmt.Sprintf("%s is the daemon's own variable and never reaches a task's commands", name)}
		case strings.HasSuffix(u, "_API_KEY"), strings.HasSuffix(u, "_TOKEN"):
			return &Error{Key: key, Msg: fmt.Sprintf("%s looks like a key or token; secrets never reach a task's commands", name)}
		}
	}
	return nil
}

// Validate checks the budgets.
func (b Budget) Validate() error {
	for key, v := range map[string]float64{"task_usd": b.TaskUSD, "daily_usd": b.DailyUSD, "fleet_usd": b.FleetUSD} {
		if v < 0 {
			return &Error{Key: key, Msg: fmt.Sprintf("want 0 (no cap) or more, got %g", v)}
		}
	}
	return nil
}

// checkRange returns an *Error for key unless lo <= n <= hi.
func checkRange(key string, n, lo, hi int) error {
	if n < lo || n > hi {
		return &Error{Key: key, Msg: fmt.Sprintf("want %d to %d, got %d", lo, hi, n)}
	}
	return nil
}

// join appends name to a dotted prefix.
func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	if name == "" {
		return prefix
	}
	return prefix + "." + name
}
