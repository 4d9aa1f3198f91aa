package cli

import "testing"

func TestTaskNewNoSupervision(t *testing.T) {
	t.Parallel()
	home, reqs := createRecorder(t, "")
	repo := gitRepo(t)
	for _, tt := range []struct {
		flags []string
		want  bool
	}{
		{nil, false},
		{[]string{"--no-supervision"}, true},
	} {
		args := append([]string{"task", "new", "explore the parser", "--repo", repo, "-q"}, tt.flags...)
		if code, _, errOut := runCLI(t, home, "", args...); code != ExitOK {
			t.Fatalf("%q: exit %d, stderr %q", tt.flags, code, errOut)
		}
		if req := <-reqs; req.NoSupervision != tt.want {
			t.Errorf("%q: NoSupervision %v; want %v", tt.flags, req.NoSupervision, tt.want)
		}
	}
}
