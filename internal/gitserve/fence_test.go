package gitserve_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/git"
	"github.com/neuraphage/neuraphage-go/internal/gitserve"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// pktLine frames s as a pkt-line.
func pktLine(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// TestAssignWaitsForTheStalePush: a push admitted under epoch 1 is still
// sending its pack when the task is re-assigned. New requests under epoch
// 1 are refused at once; Assign returns only once that push has ended (or
// its ctx is done), so nothing of the old holder can land afterwards.
func TestAssignWaitsForTheStalePush(t *testing.T) {
	t.Parallel()
	c := newCluster(t, false)
	c.assign(task, "w1", 1)
	main := c.git(c.repo, "", "rev-parse", "main")

	body, send := io.Pipe()
	t.Cleanup(func() { send.CloseWithError(errors.New("test over")) })
	req, err := http.NewRequest(http.MethodPost, gitserve.TaskURL(c.base, task, 1)+"/git-receive-pack", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token1)
	req.Header.Set("Content-Type", "application/x-git-receive-pack-request")
	answered := make(chan error, 1)
	go func() {
		resp, err := c.http.Client().Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		answered <- err
	}()
	zero := strings.Repeat("0", 40)
	commands := pktLine(zero+" "+main+" refs/heads/"+branch+"\x00report-status side-band-64k\n") + "0000"
	if _, err := io.WriteString(send, commands); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the push to be admitted", func() bool { return c.srv.Pushing(task) == 1 })

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	a2 := gitserve.Assignment{Task: task, Worker: "w2", Epoch: 2, Repo: c.repo, Base: "main"}
	if err := c.srv.Assign(cancelled, a2); !errors.Is(err, context.Canceled) {
		t.Fatalf("Assign with a push of epoch 1 running and a cancelled ctx: %v, want context.Canceled", err)
	}
	if got, _ := c.srv.Assignment(task); got != a2 {
		t.Fatalf("assignment %+v after an interrupted wait, want %+v", got, a2)
	}
	dir := c.clone(c.remote(task, 2, token2), branch)
	if err := gitserve.Fetch(context.Background(), dir, c.remote(task, 1, token1)); err == nil {
		t.Fatal("a request under epoch 1 was served after the re-assignment")
	}

	// Epoch 2 never pushed, but epoch 1's push still runs: a further
	// re-assignment waits for it too.
	a3 := gitserve.Assignment{Task: task, Worker: "w1", Epoch: 3, Repo: c.repo, Base: "main"}
	if err := c.srv.Assign(cancelled, a3); !errors.Is(err, context.Canceled) {
		t.Fatalf("a second re-assignment with epoch 1's push running: %v, want context.Canceled", err)
	}
	a4 := gitserve.Assignment{Task: task, Worker: "w2", Epoch: 4, Repo: c.repo, Base: "main"}
	assigned := make(chan error, 1)
	go func() { assigned <- c.srv.Assign(context.Background(), a4) }()
	select {
	case err := <-assigned:
		t.Fatalf("Assign returned (%v) while a push of epoch 1 was running", err)
	default:
	}
	send.CloseWithError(errors.New("worker gone"))
	if err := <-assigned; err != nil {
		t.Fatalf("Assign once the stale push ended: %v", err)
	}
	<-answered
	if c.srv.Pushing(task) != 0 {
		t.Fatalf("%d pushes still counted", c.srv.Pushing(task))
	}
	if _, err := git.Run(context.Background(), c.repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		t.Fatal("the stale push created the task branch")
	}
}

// TestAssignRules: epochs only go up, one epoch has one worker, assigning
// the same again is a no-op, and bad names or repositories are errors.
func TestAssignRules(t *testing.T) {
	t.Parallel()
	c := newCluster(t, false)
	ctx := context.Background()
	a := gitserve.Assignment{Task: task, Worker: "w1", Epoch: 5, Repo: c.repo, Base: "main"}
	if err := c.srv.Assign(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := c.srv.Assign(ctx, a); err != nil {
		t.Fatalf("the same assignment again: %v", err)
	}
	for _, bad := range []gitserve.Assignment{
		{Task: task, Worker: "w1", Epoch: 4, Repo: c.repo, Base: "main"},
		{Task: task, Worker: "w2", Epoch: 5, Repo: c.repo, Base: "main"},
		{Task: "../x", Worker: "w1", Epoch: 6, Repo: c.repo, Base: "main"},
		{Task: task, Worker: "w 1", Epoch: 6, Repo: c.repo, Base: "main"},
		{Task: task, Worker: "w1", Epoch: 6, Repo: t.TempDir(), Base: "main"},
		{Task: task, Worker: "w1", Epoch: 6, Repo: c.repo, Base: "bad..name"},
		{Task: task, Worker: "w1", Epoch: 6, Repo: c.repo, Base: "neuraphage/t-x/work"},
		{Task: task, Worker: "w1", Epoch: 6, Repo: c.repo, Base: "--upload-pack=x"},
	} {
		if err := c.srv.Assign(ctx, bad); err == nil {
			t.Errorf("Assign(%+v) succeeded", bad)
		}
	}
	if got, _ := c.srv.Assignment(task); got != a {
		t.Fatalf("assignment %+v after refused changes, want %+v", got, a)
	}
	if err := c.srv.Release(ctx, task, 4); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.srv.Assignment(task); got != a {
		t.Fatalf("Release of an older epoch ended the current assignment: %+v", got)
	}
	if err := c.srv.Release(ctx, task, 5); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.srv.Assignment(task); ok {
		t.Fatal("task still assigned after Release of its epoch")
	}
	c.assign(task, "w1", 6)
	if err := c.srv.Unassign(ctx, task); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.srv.Assignment(task); ok {
		t.Fatal("task still assigned after Unassign")
	}
	if err := c.srv.Grant("w3", "short"); err == nil {
		t.Error("a short token was granted")
	}
	if err := c.srv.Grant("w3", token1); err == nil {
		t.Error("w1's token was granted to w3 too")
	}
	if err := c.srv.Grant("../w3", token1+"x"); err == nil {
		t.Error("a worker id with a slash was granted")
	}
}

// TestNotSmartHTTP: dumb-protocol paths, wrong methods and services are
// refused with a status, never served from the repository.
func TestNotSmartHTTP(t *testing.T) {
	t.Parallel()
	c := newCluster(t, false)
	c.assign(task, "w1", 1)
	for _, tc := range []struct {
		method, path string
		want         int
		token        string
	}{
		{"POST", "/task/" + task + "/1/git-receive-pack", http.StatusForbidden, "stranger-0123456789abcdef"},
		{"POST", "/task/" + task + "/1/git-upload-pack", http.StatusForbidden, "stranger-0123456789abcdef"},
		{"GET", "/task/" + task + "/1/HEAD", http.StatusNotFound, ""},
		{"GET", "/task/" + task + "/1/objects/info/packs", http.StatusNotFound, ""},
		{"GET", "/task/" + task + "/1/info/refs", http.StatusForbidden, ""},
		{"GET", "/task/" + task + "/1/info/refs?service=git-upload-archive", http.StatusForbidden, ""},
		{"POST", "/task/" + task + "/1/info/refs", http.StatusMethodNotAllowed, ""},
		{"GET", "/task/" + task + "/1/git-receive-pack", http.StatusMethodNotAllowed, ""},
		{"GET", "/task/" + task + "/x/info/refs?service=git-upload-pack", http.StatusNotFound, ""},
		{"GET", "/other", http.StatusNotFound, ""},
	} {
		req, err := http.NewRequest(tc.method, c.base+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+cmp.Or(tc.token, token1))
		resp, err := c.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}
}
