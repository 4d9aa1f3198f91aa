package persona

import (
	"slices"
	"strings"
)

// WatcherRole is a watcher session's role: a named brief to start a
// session from (`watch add --role KEY`). Built-in ones (security, tests,
// scope) are overridable field by field in personas.yaml under watchers:,
// which may add roles of its own.
type WatcherRole struct {
	Key  string `json:"key"`
	Name string `json:"name"`
	// Authority is "peer" or "supervisor".
	Authority string `json:"authority"`
	Tier      string `json:"model_tier"`
	Brief     string `json:"brief"`
	Enabled   bool   `json:"enabled"`
	Origin    string `json:"origin"`
}

type watcherYAML struct {
	Name      *string `yaml:"name"`
	Authority *string `yaml:"authority"`
	ModelTier *string `yaml:"model-tier"`
	Brief     *string `yaml:"brief"`
	Enabled   *bool   `yaml:"enabled"`
}

// mergeWatchers lays the user's watcher roles over the built-in ones.
func mergeWatchers(s *Set, base, user map[string]*watcherYAML) error {
	s.watchers = map[string]WatcherRole{}
	for k, y := range base {
		s.watchers[k] = applyWatcher(WatcherRole{Key: k, Enabled: true, Origin: BuiltIn, Authority: "peer", Tier: "router"}, y)
	}
	for k, y := range user {
		if y == nil {
			continue
		}
		r, ok := s.watchers[k]
		switch {
		case ok:
			r.Origin = Overridden
		case !keyPattern().MatchString(k):
			return fieldErr("watchers."+k, "%q is not a valid role name; use lower-case letters, digits and '-', at most 64", k)
		default:
			r = WatcherRole{Key: k, Name: k, Enabled: true, Origin: Custom, Authority: "peer", Tier: "router"}
		}
		r = applyWatcher(r, y)
		switch r.Authority {
		case "peer", "supervisor":
		default:
			return fieldErr("watchers."+k+".authority", "%q is not an authority; want peer or supervisor", r.Authority)
		}
		if _, ok := parseTier(r.Tier); !ok {
			return fieldErr("watchers."+k+".model-tier", "%q is not a model tier; want router, worker or expert", r.Tier)
		}
		if strings.TrimSpace(r.Brief) == "" {
			return fieldErr("watchers."+k+".brief", "a watcher role needs a brief: what to watch for")
		}
		s.watchers[k] = r
	}
	return nil
}

func applyWatcher(r WatcherRole, y *watcherYAML) WatcherRole {
	if y == nil {
		return r
	}
	if y.Name != nil {
		r.Name = *y.Name
	}
	if y.Authority != nil {
		r.Authority = strings.ToLower(strings.TrimSpace(*y.Authority))
	}
	if y.ModelTier != nil {
		r.Tier = *y.ModelTier
	}
	if y.Brief != nil {
		r.Brief = *y.Brief
	}
	if y.Enabled != nil {
		r.Enabled = *y.Enabled
	}
	return r
}

// WatcherRole returns the enabled watcher role called key.
func (s *Set) WatcherRole(key string) (WatcherRole, bool) {
	r, ok := s.watchers[key]
	return r, ok && r.Enabled
}

// WatcherRoles returns the enabled watcher roles by key.
func (s *Set) WatcherRoles() []WatcherRole {
	out := make([]WatcherRole, 0, len(s.watchers))
	for _, r := range s.watchers {
		if r.Enabled {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b WatcherRole) int { return strings.Compare(a.Key, b.Key) })
	return out
}
