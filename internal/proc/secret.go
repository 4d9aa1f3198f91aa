package proc

import "strings"

// Secret reports whether an environment variable name is one no command the
// daemon runs for a task may see: a provider key or token (*_API_KEY,
// *_TOKEN) or the daemon's own variables (NEURAPHAGE_*, its home and socket
// among them).
func Secret(name string) bool {
	u := strings.ToUpper(name)
	return strings.HasPrefix(u, "NEURAPHAGE_") || strings.HasSuffix(u, "_API_KEY") || strings.HasSuffix(u, "_TOKEN")
}

// WithoutSecrets returns env ("NAME=value" entries) without the [Secret]
// ones.
func WithoutSecrets(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !Secret(name) {
			out = append(out, kv)
		}
	}
	return out
}
