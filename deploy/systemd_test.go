package deploy_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/proc"
)

// unit is a systemd unit file: section → key → values in order.
type unit map[string]map[string][]string

// readUnit parses a unit file: sections, key=value lines, comments and
// continuation lines (a trailing backslash); anything else fails the test.
func readUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		for strings.HasSuffix(line, "\\") && sc.Scan() {
			n++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(sc.Text())
		}
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: %q is not key=value in a section", path, n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

func (u unit) get(section, key string) string {
	vs := u[section][key]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// TestSystemdUnits: both units run neuraphage as its own user with the
// hardening the deployment promises, the home writable and nothing else.
func TestSystemdUnits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, home, exec string
	}{
		{"neuraphage-daemon.service", "/var/lib/neuraphage", "/usr/local/bin/neuraphage daemon start --foreground"},
		{"neuraphage-worker@.service", "/var/lib/neuraphage-worker/%i", "exec /usr/local/bin/neuraphage worker --join"},
	} {
		u := readUnit(t, filepath.Join("systemd", tc.file))
		want := map[string]string{
			"NoNewPrivileges":       "yes",
			"ProtectSystem":         "strict",
			"ReadWritePaths":        tc.home,
			"PrivateTmp":            "yes",
			"PrivateDevices":        "yes",
			"ProtectKernelTunables": "yes",
			"ProtectKernelModules":  "yes",
			"ProtectControlGroups":  "yes",
			"RestrictSUIDSGID":      "yes",
			"CapabilityBoundingSet": "",
			"User":                  "neuraphage",
			"Restart":               "on-failure",
		}
		for k, v := range want {
			if _, ok := u["Service"][k]; !ok {
				t.Errorf("%s: no %s=", tc.file, k)
			} else if got := u.get("Service", k); got != v {
				t.Errorf("%s: %s=%s, want %s", tc.file, k, got, v)
			}
		}
		if env := strings.Join(u["Service"]["Environment"], " "); !strings.Contains(env, "NEURAPHAGE_HOME="+tc.home) {
			t.Errorf("%s: NEURAPHAGE_HOME is not %s: %s", tc.file, tc.home, env)
		}
		if got := u.get("Service", "ExecStart"); !strings.Contains(got, tc.exec) {
			t.Errorf("%s: ExecStart=%s, want it to run %q", tc.file, got, tc.exec)
		}
		if got := u.get("Service", "ExecStart"); strings.Contains(got, "--token") {
			t.Errorf("%s: the token on the command line: %s", tc.file, got)
		}
		if u.get("Install", "WantedBy") != "multi-user.target" {
			t.Errorf("%s: not wanted by multi-user.target", tc.file)
		}
	}
}

// TestSystemdAnalyzeVerify: systemd itself accepts the units, where the
// machine has systemd-analyze. The binary they start is not installed
// here, so the copies verified name a stand-in for it.
func TestSystemdAnalyzeVerify(t *testing.T) {
	t.Parallel()
	analyze := ""
	for _, p := range []string{"/usr/bin/systemd-analyze", "/bin/systemd-analyze"} {
		if _, err := os.Stat(p); err == nil {
			analyze = p
		}
	}
	if analyze == "" {
		t.Skip("systemd-analyze is not installed; TestSystemdUnits still checks the keys")
	}
	dir := t.TempDir()
	stand := filepath.Join(dir, "neuraphage")
	if err := os.WriteFile(stand, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range []string{"neuraphage-daemon.service", "neuraphage-worker@.service"} {
		b, err := os.ReadFile(filepath.Join("systemd", f))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, f)
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), "/usr/local/bin/neuraphage", stand)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	res, err := proc.Run(context.Background(), proc.Cmd{Args: append([]string{analyze, "verify"}, paths...), Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || strings.TrimSpace(res.Output) != "" {
		t.Fatalf("systemd-analyze verify (exit %d):\n%s", res.ExitCode, res.Output)
	}
}
