package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Sandbox confines the commands tasks run (docs/sandbox.md).
type Sandbox struct {
	Enabled bool `yaml:"enabled"` // run commands under Landlock where the kernel has it; default true
	Require bool `yaml:"require"` // refuse to run commands when they cannot be confined (no Landlock, sandbox off, or a network policy the kernel cannot enforce); default false
	// Write lists more paths every command may write (caches such as
	// ~/.cache/go-build); absolute or starting with ~/.
	Write []string `yaml:"write"`
	// DenyRead lists more paths no command may read, besides ~/.ssh,
	// ~/.aws, ~/.config/gcloud and Neuraphage's data and run directories;
	// absolute or starting with ~/.
	DenyRead []string `yaml:"deny_read"`
	Network  Network  `yaml:"network"` // allow | deny | a list of TCP ports; default allow

	// The task's sandbox manifest (docs/lifecycle.md): the most it may be
	// given, how it is evaluated, how a permission denial is recovered
	// from, and its timeouts.

	// Tools are the tools a task's manifest may hold at most (the
	// manifest's vocabulary: Read, Write, Edit, Glob, Grep, Bash, ...);
	// a permission denial never widens a manifest beyond them.
	Tools     []string `yaml:"tools"`
	ModelPass bool     `yaml:"model_pass"` // let the router tier refine each task's manifest; default false (the deterministic rules alone)
	Recovery  string   `yaml:"recovery"`   // moderate | aggressive | interactive; default moderate
	// MaxEscalations caps the widenings of one task's manifest under the
	// moderate strategy; default 3.
	MaxEscalations int `yaml:"max_escalations"`
	// IdleTimeoutSecs and TotalTimeoutSecs are a task of medium
	// complexity's timeouts (a low one gets half, a high one twice); 0
	// turns that timeout off. Defaults 900 and 7200.
	IdleTimeoutSecs  int `yaml:"idle_timeout_secs"`
	TotalTimeoutSecs int `yaml:"total_timeout_secs"`
}

// defaultTools are the tools a manifest may hold by default: seed 003's
// default set. Task (an agent spawning agents) is left out.
var defaultTools = []string{"Read", "Write", "Edit", "Glob", "Grep", "Bash"}

// DefaultSandbox is the sandbox section's default.
func DefaultSandbox() Sandbox {
	return Sandbox{Enabled: true, Tools: slices.Clone(defaultTools), Recovery: "moderate", MaxEscalations: 3,
		IdleTimeoutSecs: 900, TotalTimeoutSecs: 7200}
}

// Validate checks the paths and the manifest's settings.
func (s Sandbox) Validate() error {
	switch s.Recovery {
	case "moderate", "aggressive", "interactive":
	default:
		return &Error{Key: "recovery", Msg: fmt.Sprintf("want moderate, aggressive or interactive, got %q", s.Recovery)}
	}
	for _, n := range []struct {
		key string
		v   int
	}{{"max_escalations", s.MaxEscalations}, {"idle_timeout_secs", s.IdleTimeoutSecs}, {"total_timeout_secs", s.TotalTimeoutSecs}} {
		if n.v < 0 {
			return &Error{Key: n.key, Msg: fmt.Sprintf("must not be negative, got %d", n.v)}
		}
	}
	for i, t := range s.Tools {
		if !validToolName(t) {
			return &Error{Key: "tools." + strconv.Itoa(i), Msg: fmt.Sprintf("want a tool name (letters, digits, _ or -), got %q", t)}
		}
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{"write", s.Write}, {"deny_read", s.DenyRead}} {
		for i, p := range list.paths {
			if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
				return &Error{Key: list.key + "." + strconv.Itoa(i), Msg: fmt.Sprintf("want an absolute path or one starting with ~/, got %q", p)}
			}
		}
	}
	return nil
}

// ExpandHome returns paths with a leading ~/ replaced by home, cleaned.
func ExpandHome(paths []string, home string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			p = filepath.Join(home, rest)
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// Network is sandbox.network: "allow", "deny", or a list of TCP ports
// commands may connect to and bind.
type Network struct {
	Deny  bool
	Ports []int
}

// Allows reports whether n leaves the network alone.
func (n Network) Allows() bool { return !n.Deny && len(n.Ports) == 0 }

// String renders n: "allow", "deny" or "80,443".
func (n Network) String() string {
	switch {
	case n.Deny:
		return "deny"
	case len(n.Ports) > 0:
		s := make([]string, len(n.Ports))
		for i, p := range n.Ports {
			s[i] = strconv.Itoa(p)
		}
		return strings.Join(s, ",")
	}
	return "allow"
}

var networkType = reflect.TypeFor[Network]()

const networkWant = "allow, deny or a list of TCP ports (1..65535)"

// UnmarshalYAML reads allow, deny or a list of ports.
func (n *Network) UnmarshalYAML(v *yaml.Node) error {
	switch v.Kind {
	case yaml.ScalarNode:
		switch v.Value {
		case "allow":
			*n = Network{}
			return nil
		case "deny":
			*n = Network{Deny: true}
			return nil
		}
	case yaml.SequenceNode:
		var out Network
		for _, e := range v.Content {
			p, err := strconv.Atoi(e.Value)
			if e.Kind != yaml.ScalarNode || err != nil || p < 1 || p > 65535 {
				return fmt.Errorf("%s is not a TCP port (1..65535)", describe(e))
			}
			if !slices.Contains(out.Ports, p) {
				out.Ports = append(out.Ports, p)
			}
		}
		if len(out.Ports) == 0 {
			return fmt.Errorf("an empty list allows nothing; write deny")
		}
		*n = out
		return nil
	}
	return &yaml.TypeError{Errors: []string{"want " + networkWant + ", got " + describe(v)}}
}

// MarshalYAML writes what UnmarshalYAML reads.
func (n Network) MarshalYAML() (any, error) {
	if len(n.Ports) > 0 && !n.Deny {
		return n.Ports, nil
	}
	return n.String(), nil
}

// validToolName reports whether t can name a tool: 1 to 64 letters,
// digits, _ or -.
func validToolName(t string) bool {
	if t == "" || len(t) > 64 {
		return false
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
