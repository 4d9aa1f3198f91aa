package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolvePaths(t *testing.T) {
	t.Parallel()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		want Paths
	}{
		{
			name: "NEURAPHAGE_HOME relocates everything",
			env:  map[string]string{"NEURAPHAGE_HOME": "/srv/np", "HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1"},
			want: homePaths("/srv/np"),
		},
		{
			name: "relative NEURAPHAGE_HOME is made absolute",
			env:  map[string]string{"NEURAPHAGE_HOME": "np-home"},
			want: homePaths(filepath.Join(cwd, "np-home")),
		},
		{
			name: "NEURAPHAGE_HOME is cleaned",
			env:  map[string]string{"NEURAPHAGE_HOME": "/srv//np/"},
			want: homePaths("/srv/np"),
		},
		{
			name: "defaults from HOME",
			env:  map[string]string{"HOME": "/home/u"},
			want: xdgPaths("/home/u/.config/neuraphage", "/home/u/.local/share/neuraphage",
				"/home/u/.local/share/neuraphage/run", "/home/u/.local/state/neuraphage/logs"),
		},
		{
			name: "XDG variables set",
			env: map[string]string{
				"HOME": "/home/u", "XDG_CONFIG_HOME": "/x/cfg", "XDG_DATA_HOME": "/x/data",
				"XDG_STATE_HOME": "/x/state", "XDG_RUNTIME_DIR": "/run/user/1000",
			},
			want: xdgPaths("/x/cfg/neuraphage", "/x/data/neuraphage", "/run/user/1000/neuraphage", "/x/state/neuraphage/logs"),
		},
		{
			name: "all XDG variables set need no HOME",
			env: map[string]string{
				"XDG_CONFIG_HOME": "/x/cfg", "XDG_DATA_HOME": "/x/data", "XDG_STATE_HOME": "/x/state",
			},
			want: xdgPaths("/x/cfg/neuraphage", "/x/data/neuraphage", "/x/data/neuraphage/run", "/x/state/neuraphage/logs"),
		},
		{
			name: "relative XDG variables are ignored",
			env: map[string]string{
				"HOME": "/home/u", "XDG_CONFIG_HOME": "cfg", "XDG_DATA_HOME": "data", "XDG_RUNTIME_DIR": "run",
			},
			want: xdgPaths("/home/u/.config/neuraphage", "/home/u/.local/share/neuraphage",
				"/home/u/.local/share/neuraphage/run", "/home/u/.local/state/neuraphage/logs"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ResolvePaths(envLookup(tt.env))
			if err != nil {
				t.Fatalf("ResolvePaths: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ResolvePaths mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolvePathsErrors(t *testing.T) {
	t.Parallel()
	long := "/" + strings.Repeat("d", 90)
	tests := []struct {
		name      string
		env       map[string]string
		wantIn    []string
		wantIs    error
		wantPaths bool
	}{
		{
			name:   "missing HOME",
			env:    map[string]string{},
			wantIn: []string{"HOME", "NEURAPHAGE_HOME"},
		},
		{
			name:   "relative HOME",
			env:    map[string]string{"HOME": "home/u"},
			wantIn: []string{`HOME is "home/u"`},
		},
		{
			name:      "socket path too long under NEURAPHAGE_HOME",
			env:       map[string]string{"NEURAPHAGE_HOME": long},
			wantIn:    []string{long + "/run/neuraphage.sock", "104", "shorter directory", "NEURAPHAGE_HOME"},
			wantIs:    ErrSocketPathTooLong,
			wantPaths: true,
		},
		{
			name:      "socket path too long under XDG_RUNTIME_DIR",
			env:       map[string]string{"HOME": "/home/u", "XDG_RUNTIME_DIR": long},
			wantIn:    []string{"NEURAPHAGE_HOME"},
			wantIs:    ErrSocketPathTooLong,
			wantPaths: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := ResolvePaths(envLookup(tt.env))
			if err == nil {
				t.Fatalf("ResolvePaths = %+v, want an error", p)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q is not %v", err, tt.wantIs)
			}
			if tt.wantPaths != (p.Socket != "") {
				t.Errorf("Paths returned with error = %+v, want populated: %v", p, tt.wantPaths)
			}
		})
	}
}

// TestResolvePathsSocketLimit pins the boundary: 100 bytes is allowed, 101 is not.
func TestResolvePathsSocketLimit(t *testing.T) {
	t.Parallel()
	suffix := len("/run/neuraphage.sock")
	for _, n := range []int{MaxSocketPath, MaxSocketPath + 1} {
		home := "/" + strings.Repeat("h", n-suffix-1)
		p, err := ResolvePaths(envLookup(map[string]string{"NEURAPHAGE_HOME": home}))
		if len(p.Socket) != n {
			t.Fatalf("socket %q has %d bytes, want %d", p.Socket, len(p.Socket), n)
		}
		if gotErr, wantErr := err != nil, n > MaxSocketPath; gotErr != wantErr {
			t.Errorf("%d-byte socket path: err = %v, want error: %v", n, err, wantErr)
		}
	}
}

func envLookup(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

func homePaths(h string) Paths {
	return Paths{
		Home:       h,
		ConfigDir:  h + "/config",
		ConfigFile: h + "/config/neuraphage.yaml",
		Personas:   h + "/config/personas.yaml",
		DataDir:    h + "/data",
		DBFile:     h + "/data/neuraphage.db",
		RunDir:     h + "/run",
		Socket:     h + "/run/neuraphage.sock",
		PIDFile:    h + "/run/daemon.pid",
		LockFile:   h + "/run/daemon.lock",
		LogDir:     h + "/logs",
		LogFile:    h + "/logs/daemon.log",
	}
}

func xdgPaths(cfg, data, run, logs string) Paths {
	return Paths{
		ConfigDir:  cfg,
		ConfigFile: cfg + "/neuraphage.yaml",
		Personas:   cfg + "/personas.yaml",
		DataDir:    data,
		DBFile:     data + "/neuraphage.db",
		RunDir:     run,
		Socket:     run + "/neuraphage.sock",
		PIDFile:    run + "/daemon.pid",
		LockFile:   run + "/daemon.lock",
		LogDir:     logs,
		LogFile:    logs + "/daemon.log",
	}
}
