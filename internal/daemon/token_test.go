package daemon_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
)

// TestAPIRefusesRequestsWithoutTheToken: whoever can connect to the socket
// but not read the token file (a sandboxed command, below Landlock ABI v9)
// can neither probe the daemon nor create a task; the client, reading the
// token, can.
func TestAPIRefusesRequestsWithoutTheToken(t *testing.T) {
	t.Parallel()
	r := start(t, shortTemp(t))
	ctx := context.Background()
	tokenFile := api.TokenPath(r.paths.Socket)
	fi, err := os.Stat(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", tokenFile, fi.Mode().Perm())
	}
	raw := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", r.paths.Socket)
	}}}
	defer raw.CloseIdleConnections()
	for _, tt := range []struct{ method, path, auth, body, want string }{
		{"GET", "/v1/health", "", "", "not authorised: this client cannot read " + tokenFile},
		{"POST", "/v1/tasks", "", `{"description":"from the sandbox"}`, "cannot read " + tokenFile},
		{"POST", "/v1/tasks", "Bearer guessed", `{"description":"from the sandbox"}`, "not the one in " + tokenFile},
		{"POST", "/v1/shutdown", "", "", "cannot read"},
	} {
		req, err := http.NewRequestWithContext(ctx, tt.method, "http://neuraphage"+tt.path, strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s %s (auth %q) = %d %s, want 401 saying %q", tt.method, tt.path, tt.auth, resp.StatusCode, b, tt.want)
		}
	}
	tasks, err := r.client.ListTasks(ctx, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 0 {
		t.Fatalf("tasks created without the token: %v", tasks)
	}

	// A client that cannot read the token says why.
	if err := os.Rename(tokenFile, tokenFile+".moved"); err != nil {
		t.Fatal(err)
	}
	_, err = r.client.Health(ctx)
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Code() != api.CodeUnauthorized || !strings.Contains(ae.Error(), "no such file") {
		t.Errorf("Health without the token file = %v, want unauthorized naming the missing file", err)
	}
	if err := os.Rename(tokenFile+".moved", tokenFile); err != nil {
		t.Fatal(err)
	}
	if _, err := r.client.Health(ctx); err != nil {
		t.Fatal(err)
	}
}
