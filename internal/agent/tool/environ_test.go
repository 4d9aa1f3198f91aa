package tool

import (
	"strings"
	"testing"
)

// TestBashEnvironmentLeak runs a real env through the bash tool with secrets
// in the daemon's environment: none reaches the command, even when the user
// lists it, and the allowed variables do.
func TestBashEnvironmentLeak(t *testing.T) {
	secrets := map[string]string{
		"ANTHROPIC_API_KEY": "sk-ant-secret",
		"OPENAI_API_KEY":    "sk-openai-secret",
		"GH_TOKEN":          "ghp-secret",
		"NEURAPHAGE_HOME":   "/secret/home",
		"NEURAPHAGE_SOCKET": "/secret/neuraphage.sock",
		"DAEMON_ONLY":       "daemon-secret",
	}
	allowed := map[string]string{
		"HOME":   "/home/someone",
		"LANG":   "C.UTF-8",
		"LC_ALL": "C.UTF-8",
		"TZ":     "UTC",
		"TERM":   "dumb",
		"GOPATH": "/go/path", // allowed by the user
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	for k, v := range allowed {
		t.Setenv(k, v)
	}
	dir := tree(t, nil)
	env := Env{
		Dir:      dir,
		EnvAllow: []string{"GOPATH", "OPENAI_API_KEY", "NEURAPHAGE_HOME"}, // the last two refused even so
		Vars:     []string{"NEURAPHAGE_TASK_ID=t-1", "NEURAPHAGE_WORKTREE=" + dir, "PORT=4711"},
	}
	res := call(t, bashTool{}, &env, map[string]any{"command": "env"})
	if res.IsError {
		t.Fatalf("env failed: %s", res.Content)
	}
	got := map[string]string{}
	for line := range strings.Lines(res.Content) {
		if k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "="); ok {
			got[k] = v
		}
	}
	for k, v := range secrets {
		if _, ok := got[k]; ok || strings.Contains(res.Content, v) {
			t.Errorf("%s reached the command", k)
		}
	}
	want := map[string]string{"NEURAPHAGE_TASK_ID": "t-1", "NEURAPHAGE_WORKTREE": dir, "PORT": "4711", "PWD": dir, "GIT_TERMINAL_PROMPT": "0"}
	for k, v := range allowed {
		want[k] = v
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "NEURAPHAGE_") && k != "NEURAPHAGE_TASK_ID" && k != "NEURAPHAGE_WORKTREE" {
			t.Errorf("daemon variable %s reached the command", k)
		}
	}
}

func TestEnvDenied(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "openai_api_key": true, "GITHUB_TOKEN": true, "NEURAPHAGE_SOCKET": true,
		"PATH": false, "GOPATH": false, "TOKENS": false, "API_KEY_FILE": false,
	} {
		if got := EnvDenied(name); got != want {
			t.Errorf("EnvDenied(%q) = %v, want %v", name, got, want)
		}
	}
}
