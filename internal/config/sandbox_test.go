package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSandboxConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		yaml, want, err string
	}{
		{yaml: "", want: "allow"},
		{yaml: "sandbox:\n  network: deny\n", want: "deny"},
		{yaml: "sandbox:\n  network: [443, 80, 443]\n", want: "443,80"},
		{yaml: "sandbox:\n  network: maybe\n", err: `:2: sandbox.network: want allow, deny or a list of TCP ports (1..65535), got "maybe"`},
		{yaml: "sandbox:\n  network: [80, 0]\n", err: ":2: sandbox.network: want allow, deny or a list of TCP ports (1..65535), got a list: 0 is not a TCP port"},
		{yaml: "sandbox:\n  network: []\n", err: "an empty list allows nothing; write deny"},
		{yaml: "sandbox:\n  network: {a: 1}\n", err: ":2: sandbox.network: want allow, deny or a list of TCP ports (1..65535), got a mapping"},
		{yaml: "sandbox:\n  require: true\n  write:\n    - /ok\n    - rel\n", err: `:5: sandbox.write.1: want an absolute path or one starting with ~/, got "rel"`},
		{yaml: "sandbox:\n  deny_read: [~user/x]\n", err: `sandbox.deny_read.0: want an absolute path or one starting with ~/, got "~user/x"`},
		{yaml: "sandbox:\n  enable: true\n", err: `unknown key; did you mean "enabled"?`},
		{yaml: "sandbox:\n  recovery: reckless\n", err: `sandbox.recovery: want moderate, aggressive or interactive, got "reckless"`},
		{yaml: "sandbox:\n  idle_timeout_secs: -1\n", err: "sandbox.idle_timeout_secs: must not be negative, got -1"},
		{yaml: "sandbox:\n  tools: [Read, \"rm -rf\"]\n", err: `sandbox.tools.1: want a tool name (letters, digits, _ or -), got "rm -rf"`},
	} {
		p := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(p, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(p)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil || c.Sandbox.Network.String() != tc.want || !c.Sandbox.Enabled {
			t.Errorf("%q: %+v, %v; want network %s, enabled", tc.yaml, c.Sandbox, err, tc.want)
		}
	}
	if got := ExpandHome([]string{"~/.cache/go-build", "/abs/../x"}, "/home/u"); strings.Join(got, " ") != "/home/u/.cache/go-build /x" {
		t.Errorf("ExpandHome: %q", got)
	}
}
