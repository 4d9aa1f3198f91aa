package syncer

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// memberOf is a running task that changed files.
func memberOf(id task.ID, parent task.ID, desc string, tags []string, files ...string) *member {
	m := newMember(task.Task{ID: id, ParentID: parent, Description: desc, Tags: tags, Status: task.Running})
	for _, f := range files {
		m.files[f] = true
	}
	return m
}

func TestCandidateRelations(t *testing.T) {
	t.Parallel()
	const desc = "Work on the service"
	for _, tc := range []struct {
		name   string
		cfg    func(*Config)
		src, m *member
		files  []string // the learning's
		want   []string
	}{
		{name: "unrelated", src: memberOf("t-a", "", desc, []string{"auth"}), m: memberOf("t-b", "", desc, []string{"ui"})},
		{name: "same parent", src: memberOf("t-a", "t-p", desc, nil), m: memberOf("t-b", "t-p", desc, nil), want: []string{"same-parent"}},
		{name: "no parents are not the same parent", src: memberOf("t-a", "", desc, nil), m: memberOf("t-b", "", desc, nil)},
		{name: "other parents", src: memberOf("t-a", "t-p", desc, nil), m: memberOf("t-b", "t-q", desc, nil)},
		{name: "shared tag", src: memberOf("t-a", "", desc, []string{"auth", "api"}), m: memberOf("t-b", "", desc, []string{"ui", "auth"}),
			want: []string{"shared-tags"}},
		{name: "generic tags are not shared", src: memberOf("t-a", "", desc, []string{"error", "location", "statement", "learning"}),
			m: memberOf("t-b", "", desc, []string{"error", "location", "statement", "learning"})},
		{name: "a group tag is a group, not a shared tag", src: memberOf("t-a", "", desc, []string{"group:billing"}),
			m: memberOf("t-b", "", desc, []string{"group:billing"}), want: []string{"same-group"}},
		{name: "other groups", src: memberOf("t-a", "", desc, []string{"group:billing"}), m: memberOf("t-b", "", desc, []string{"group:search"})},
		{name: "the learning's file", src: memberOf("t-a", "", desc, nil), m: memberOf("t-b", "", desc, nil, "auth/token.go"),
			files: []string{"auth/token.go"}, want: []string{"same-files"}},
		{name: "the learning's directory", src: memberOf("t-a", "", desc, nil), m: memberOf("t-b", "", desc, nil, "auth/flow_test.go"),
			files: []string{"auth/token.go"}, want: []string{"same-files"}},
		{name: "a file the source changed", src: memberOf("t-a", "", desc, nil, "web/app.ts"), m: memberOf("t-b", "", desc, nil, "web/login.ts"),
			want: []string{"same-files"}},
		{name: "the root directory is not shared", src: memberOf("t-a", "", desc, nil, "go.mod"), m: memberOf("t-b", "", desc, nil, "README.md"),
			files: []string{"Makefile"}},
		{name: "other directories", src: memberOf("t-a", "", desc, nil), m: memberOf("t-b", "", desc, nil, "web/auth/login.ts"),
			files: []string{"auth/token.go"}},
		{name: "everything", src: memberOf("t-a", "t-p", desc, []string{"auth", "group:g"}, "auth/a.go"),
			m:    memberOf("t-b", "t-p", desc, []string{"auth", "group:g"}, "auth/b.go"),
			want: []string{"same-parent", "shared-tags", "same-files", "same-group"}},
		{name: "relationships off", cfg: func(c *Config) { c.SameParent, c.SharedTags, c.SameFiles, c.SameGroup = false, false, false, false },
			src: memberOf("t-a", "t-p", desc, []string{"auth", "group:g"}, "auth/a.go"),
			m:   memberOf("t-b", "t-p", desc, []string{"auth", "group:g"}, "auth/b.go")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := baseConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			s := New(Options{Config: cfg})
			l := store.Learning{ID: 1, TaskID: tc.src.t.ID, Kind: "explicit", Summary: "Something about the service", Files: tc.files}
			c := s.candidate(l, tc.src, tc.m)
			if diff := cmp.Diff(tc.want, c.Relations); diff != "" {
				t.Errorf("relations (-want +got):\n%s", diff)
			}
			if c.TaskID != tc.m.t.ID || c.Score < 0 || c.Score > 1 {
				t.Errorf("candidate = %+v", c)
			}
		})
	}
}

func TestCandidateAllowed(t *testing.T) {
	t.Parallel()
	l := store.Learning{ID: 1, TaskID: "t-a", Kind: "explicit", Summary: "The JWT library rejects tokens without an iat claim", Tags: []string{"jwt"}}
	src := memberOf("t-a", "t-p", "Implement JWT validation", []string{"auth", "jwt"})
	sibling := memberOf("t-b", "t-p", "Build login form with JWT token refresh", []string{"ui", "jwt"})
	tagged := memberOf("t-c", "", "Write integration tests for JWT tokens", []string{"jwt"})
	stranger := memberOf("t-d", "", "Explain JWT tokens in the docs", nil)
	nothing := memberOf("t-e", "", "Make the greeting friendlier", []string{"ui"})
	for _, tc := range []struct {
		name  string
		cfg   func(*Config)
		allow map[task.ID][]string
	}{
		{name: "defaults", allow: map[task.ID][]string{"t-b": {Blocking, Helpful, FYI}, "t-c": {Blocking, Helpful}, "t-d": {Blocking}}},
		{name: "always", cfg: func(c *Config) { c.Relay = map[string]Policy{Blocking: Always, Helpful: Always, FYI: Always} },
			allow: map[task.ID][]string{"t-b": {Blocking, Helpful, FYI}, "t-c": {Blocking, Helpful, FYI}, "t-d": {Blocking, Helpful, FYI}}},
		{name: "never", cfg: func(c *Config) { c.Relay = map[string]Policy{Blocking: Never, Helpful: Never, FYI: Never} }},
		{name: "same parent only", cfg: func(c *Config) {
			c.Relay = map[string]Policy{Blocking: SameParent, Helpful: SameParent, FYI: SameParent}
		},
			allow: map[task.ID][]string{"t-b": {Blocking, Helpful, FYI}}},
		{name: "relevance too high", cfg: func(c *Config) { c.MinRelevance = 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := baseConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			s := New(Options{Config: cfg})
			got := map[task.ID][]string{}
			for _, m := range []*member{sibling, tagged, stranger, nothing} {
				if c := s.candidate(l, src, m); len(c.Allowed) > 0 {
					got[m.t.ID] = c.Allowed
				}
			}
			if tc.allow == nil {
				tc.allow = map[task.ID][]string{}
			}
			if diff := cmp.Diff(tc.allow, got); diff != "" {
				t.Errorf("allowed urgencies (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScore(t *testing.T) {
	t.Parallel()
	l := store.Learning{Summary: "The JWT library rejects tokens without an iat claim", Tags: []string{"auth", "jwt"}, Files: []string{"auth/token.go"}}
	near := task.Task{Description: "Build login form with JWT token refresh", Tags: []string{"auth", "ui"}}
	far := task.Task{Description: "Make the greeting friendlier", Tags: []string{"ui"}}
	files := func(fs ...string) map[string]bool {
		out := map[string]bool{}
		for _, f := range fs {
			out[f] = true
		}
		return out
	}

	related := Score(l, near, "", files("auth/token.go"), true)
	unrelated := Score(l, far, "", nil, false)
	if !(related > unrelated) || unrelated != 0 {
		t.Errorf("a related task with the same file scores %.2f, an unrelated one %.2f", related, unrelated)
	}
	sameFile := Score(l, far, "", files("auth/token.go"), false)
	sameDir := Score(l, far, "", files("auth/flow_test.go"), false)
	otherDir := Score(l, far, "", files("web/greeting.go"), false)
	if !(sameFile > sameDir && sameDir > otherDir) {
		t.Errorf("same file %.2f, same directory %.2f, other directory %.2f: want decreasing", sameFile, sameDir, otherDir)
	}
	if d := Score(l, far, "", nil, true) - unrelated; d < 0.099 || d > 0.101 {
		t.Errorf("a relationship adds %.3f, want 0.1", d)
	}
	if tagged := Score(l, task.Task{Description: "x", Tags: []string{"jwt"}}, "", nil, false); tagged < 0.2 {
		t.Errorf("a shared topic tag scores %.2f, want at least 0.2", tagged)
	}
	// A generic tag counts as a term the task mentions, not as a topic.
	generic := Score(store.Learning{Summary: "zzz", Tags: []string{"error"}}, task.Task{Description: "x", Tags: []string{"error"}}, "", nil, false)
	topic := Score(store.Learning{Summary: "zzz", Tags: []string{"billing"}}, task.Task{Description: "x", Tags: []string{"billing"}}, "", nil, false)
	if d := topic - generic; d < 0.199 || d > 0.201 {
		t.Errorf("a shared topic tag scores %.2f, a shared generic tag %.2f: want 0.2 apart", topic, generic)
	}
	noFocus := Score(l, far, "", nil, false)
	focus := Score(l, far, "bash go test ./jwt -run TestIat", nil, false)
	if !(focus > noFocus) {
		t.Errorf("a focus on the learning's terms scores %.2f, without %.2f", focus, noFocus)
	}
	all := Score(l, task.Task{Description: l.Summary, Tags: l.Tags}, "", files("auth/token.go"), true)
	if all != 1 {
		t.Errorf("everything in common scores %.2f, want 1 (capped)", all)
	}
	if empty := Score(store.Learning{}, task.Task{}, "", nil, false); empty != 0 {
		t.Errorf("nothing scores %.2f", empty)
	}
}
