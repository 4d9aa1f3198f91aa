package config

import (
	"errors"
	"fmt"
	"path/filepath"
)

// MaxSocketPath is the longest socket path [ResolvePaths] accepts. The kernel
// limit (sun_path) is 104 bytes on macOS and the BSDs and 108 on Linux,
// including the terminating NUL; 100 leaves a margin.
const MaxSocketPath = 100

// ErrSocketPathTooLong is wrapped by the error [ResolvePaths] returns when
// the socket path would exceed [MaxSocketPath].
var ErrSocketPathTooLong = errors.New("socket path too long")

// Paths says where Neuraphage keeps its state.
type Paths struct {
	Home       string `json:"home"` // NEURAPHAGE_HOME if set (made absolute), else ""
	ConfigDir  string `json:"config_dir"`
	ConfigFile string `json:"config_file"` // ConfigDir/neuraphage.yaml
	Personas   string `json:"personas"`    // ConfigDir/personas.yaml: the user's persona overrides and workflows
	DataDir    string `json:"data_dir"`
	DBFile     string `json:"db_file"`   // DataDir/neuraphage.db
	RunDir     string `json:"run_dir"`   // holds the socket, pid and lock files; created 0700 by the daemon
	Socket     string `json:"socket"`    // RunDir/neuraphage.sock
	PIDFile    string `json:"pid_file"`  // RunDir/daemon.pid
	LockFile   string `json:"lock_file"` // RunDir/daemon.lock
	LogDir     string `json:"log_dir"`
	LogFile    string `json:"log_file"` // LogDir/daemon.log
}

// ResolvePaths computes Paths from the environment; pass os.Getenv in
// production and a map lookup in tests. Nothing is created on disk.
//
// With NEURAPHAGE_HOME=H (made absolute with filepath.Abs): ConfigDir=H/config,
// DataDir=H/data, RunDir=H/run, LogDir=H/logs. Otherwise the XDG base
// directories: ConfigDir=$XDG_CONFIG_HOME/neuraphage (default
// $HOME/.config/neuraphage), DataDir=$XDG_DATA_HOME/neuraphage (default
// $HOME/.local/share/neuraphage), RunDir=$XDG_RUNTIME_DIR/neuraphage if
// XDG_RUNTIME_DIR is set, else DataDir/run, and
// LogDir=$XDG_STATE_HOME/neuraphage/logs (default
// $HOME/.local/state/neuraphage/logs). As the XDG specification says,
// relative XDG_* values are ignored.
//
// It is an error when HOME is needed (NEURAPHAGE_HOME unset and some XDG
// variable unset) but unset or relative. When the socket path would exceed
// [MaxSocketPath] bytes, ResolvePaths returns the computed Paths together with
// an error wrapping [ErrSocketPathTooLong] that suggests a shorter
// NEURAPHAGE_HOME, so that callers can still show where things would be.
func ResolvePaths(getenv func(string) string) (Paths, error) {
	var p Paths
	if h := getenv("NEURAPHAGE_HOME"); h != "" {
		abs, err := filepath.Abs(h)
		if err != nil {
			return Paths{}, fmt.Errorf("resolving NEURAPHAGE_HOME %q: %w", h, err)
		}
		p.Home = abs
		p.ConfigDir = filepath.Join(abs, "config")
		p.DataDir = filepath.Join(abs, "data")
		p.RunDir = filepath.Join(abs, "run")
		p.LogDir = filepath.Join(abs, "logs")
	} else {
		// xdg returns $name, or $HOME/def when $name is unset or relative.
		var homeErr error
		xdg := func(name, def string) string {
			if v := getenv(name); filepath.IsAbs(v) {
				return filepath.Clean(v)
			}
			home := getenv("HOME")
			if !filepath.IsAbs(home) {
				homeErr = fmt.Errorf("locating the %s directory: HOME is %q; set HOME or NEURAPHAGE_HOME to an absolute path", name, home)
			}
			return filepath.Join(home, def)
		}
		p.ConfigDir = filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), "neuraphage")
		p.DataDir = filepath.Join(xdg("XDG_DATA_HOME", filepath.Join(".local", "share")), "neuraphage")
		p.LogDir = filepath.Join(xdg("XDG_STATE_HOME", filepath.Join(".local", "state")), "neuraphage", "logs")
		if homeErr != nil {
			return Paths{}, homeErr
		}
		p.RunDir = filepath.Join(p.DataDir, "run")
		if rt := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
			p.RunDir = filepath.Join(rt, "neuraphage")
		}
	}
	p.ConfigFile = filepath.Join(p.ConfigDir, "neuraphage.yaml")
	p.Personas = filepath.Join(p.ConfigDir, "personas.yaml")
	p.DBFile = filepath.Join(p.DataDir, "neuraphage.db")
	p.Socket = filepath.Join(p.RunDir, "neuraphage.sock")
	p.PIDFile = filepath.Join(p.RunDir, "daemon.pid")
	p.LockFile = filepath.Join(p.RunDir, "daemon.lock")
	p.LogFile = filepath.Join(p.LogDir, "daemon.log")
	if len(p.Socket) > MaxSocketPath {
		return p, fmt.Errorf("%w: %s is %d bytes, over the %d this program allows (Unix sockets allow about 104); set NEURAPHAGE_HOME to a shorter directory such as ~/.neuraphage",
			ErrSocketPathTooLong, p.Socket, len(p.Socket), MaxSocketPath)
	}
	return p, nil
}
