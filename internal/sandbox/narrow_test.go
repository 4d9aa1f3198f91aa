package sandbox_test

import (
	"slices"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
)

// A task's Narrow may take away from its policy, never add: what it
// returns beyond the launcher's policy is dropped.
func TestWrapKeepsNarrowWithinThePolicy(t *testing.T) {
	t.Parallel()
	l := &sandbox.Launcher{Exe: "/bin/neuraphage", Status: sandbox.Status{ABI: 6}, Write: []string{"/cache"}, DenyRead: []string{"/keys"}}
	tk := sandbox.Task{Dir: "/w/t1", TempDir: "/tmp/t1", Narrow: func(p sandbox.Policy) sandbox.Policy {
		return sandbox.Policy{
			Write:    []string{"/w/t1/src", "/etc", "/cache/go", "/w/t10"},
			DenyRead: nil, // dropping a denied read must not work
			Network:  sandbox.Network{Deny: true},
		}
	}}
	c, err := l.Wrap(proc.Cmd{Args: []string{"true"}}, tk)
	if err != nil {
		t.Fatal(err)
	}
	p, argv, err := sandbox.ParseArgs(c.Args[2:])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Write, []string{"/w/t1/src", "/cache/go"}) {
		t.Errorf("write %q, want the narrowed paths within the policy alone", p.Write)
	}
	if !slices.Equal(p.DenyRead, []string{"/keys"}) || !p.Network.Deny || !slices.Equal(argv, []string{"true"}) {
		t.Errorf("policy %+v, argv %q", p, argv)
	}
}
