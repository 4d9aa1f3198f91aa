package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"",
		"# only a comment\n",
		"~\n",
		commented,
		"log: {level: debug}\ndaemon: {shutdown_timeout_secs: 600, start_timeout_secs: 1, auto_start: off}\n",
		"events:\n  subscriber_buffer: 16\n  retention_days: 30\n",
		"tasks:\n  default_priority: 1.5\n  default_engine: Bad Name\n",
		"daemon:\n  shutdown_timeout_secs: ten\n",
		"logs: {}\n",
		"log:\n  level: info\n  level: debug\n",
		"a: &x [1, 2]\nb: *x\n",
		"log:\n  <<: {level: info}\n",
		"a: [1, 2}\n",
		"- a\n- b\n",
		"log: {level: info}\n---\nlog: {}\n",
		"? [a]\n: b\n",
		"\t a: 1",
		"daemon: !!binary aGVsbG8=\n",
		"events: {retention_days: 18446744073709551615}\n",
		"llm:\n  tiers:\n    worker: {provider: foo, model: x}\n",
		"llm:\n  models: []\n  providers: {openai: {base_url: 'http://localhost:11434/v1'}}\n",
		"llm:\n  models:\n    - {name: m, provider: openai, input_per_mtok: .nan}\n",
		"worktree:\n  port_env: ''\n  bootstrap:\n    - {repo: /a, copy: [.env, '[x'], setup_timeout_secs: 0}\n    - {copy: ['../b']}\n",
		"merge: {strategy: squash, pr: true, remote: '', max_send_backs: 101, author_email: x}\n",
	} {
		f.Add([]byte(seed))
	}
	// Each fuzz worker is a process that runs inputs one at a time, so one
	// file per process will do, and is much cheaper than t.TempDir per input.
	path := filepath.Join(f.TempDir(), "neuraphage.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load error %v is %T, want *Error", err, err)
			}
			if ce.File != path {
				t.Fatalf("Load error %q names file %q, want %q", err, ce.File, path)
			}
			if ce.Key != "" && ce.Line == 0 {
				t.Fatalf("Load error %q names a key but no line", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Load returned a config that fails Validate: %v", err)
		}
	})
}

// FuzzSet checks that Set on any file that loads either makes exactly the
// requested change or leaves the file alone and returns an *Error.
func FuzzSet(f *testing.F) {
	for _, seed := range []string{
		"",
		"# only a comment\n",
		commented,
		"log: {level: info} # flow\n",
		"daemon: # empty\n",
		"log:\n  level: &l info\ntasks:\n  default_engine: native\n",
		"---\n# head\nlog:\n  # above\n  level: error\n  # foot\n",
	} {
		f.Add([]byte(seed))
	}
	path := filepath.Join(f.TempDir(), "neuraphage.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		before, err := Load(path)
		if err != nil {
			return
		}
		if err := Set(path, "log.level", "warn"); err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Set error %v is %T, want *Error", err, err)
			}
			if after, _ := os.ReadFile(path); string(after) != string(data) {
				t.Fatalf("Set failed (%v) but changed the file to %q", err, after)
			}
			return
		}
		after, err := Load(path)
		if err != nil {
			t.Fatalf("Load after Set: %v", err)
		}
		before.Log.Level = "warn"
		if diff := cmp.Diff(before, after); diff != "" {
			t.Fatalf("Set changed more than log.level (-want +got):\n%s", diff)
		}
	})
}
