package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/spawn"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// getPaths resolves where state lives, once.
func (a *app) getPaths() (config.Paths, error) {
	if a.paths == nil {
		p, err := config.ResolvePaths(a.env.Getenv)
		if err != nil {
			return config.Paths{}, err
		}
		a.paths = &p
	}
	return *a.paths, nil
}

// getConfig loads the configuration file, once.
func (a *app) getConfig() (config.Config, error) {
	if a.cfg == nil {
		p, err := a.getPaths()
		if err != nil {
			return config.Config{}, err
		}
		c, err := config.Load(p.ConfigFile)
		if err != nil {
			return config.Config{}, err
		}
		a.cfg = &c
	}
	return *a.cfg, nil
}

// probe reports whether a daemon answers on the socket.
func probe(ctx context.Context, c *client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := c.Health(ctx)
	return err
}

// reach runs fn, a request that changes nothing, with a client for the
// daemon. It skips connect's health probe: the request is sent at once, and
// only when no daemon answers does connect start one (as the config allows)
// and fn run again. A listing thus costs one round trip, not two.
func (a *app) reach(ctx context.Context, fn func(*client.Client) error) error {
	if a.client == nil {
		p, err := a.getPaths()
		if err != nil {
			return err
		}
		c := client.New(p.Socket)
		err = fn(c)
		if !errors.Is(err, client.ErrUnreachable) {
			a.client = c // closed by Main
			return err
		}
		c.Close()
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	return fn(c)
}

// connect returns a client for a running daemon, starting one if the config
// allows it.
func (a *app) connect(ctx context.Context) (*client.Client, error) {
	if a.client != nil {
		return a.client, nil
	}
	p, err := a.getPaths()
	if err != nil {
		return nil, err
	}
	// A running daemon is used whatever the config file now says: a file
	// broken after the daemon started must not lock the user out of it.
	c := client.New(p.Socket)
	err = probe(ctx, c)
	if err == nil {
		a.client = c
		return c, nil
	}
	if !errors.Is(err, client.ErrUnreachable) {
		return nil, err
	}
	cfg, err := a.getConfig()
	if err != nil {
		return nil, err
	}
	if !cfg.Daemon.AutoStart {
		return nil, &unreachableError{fmt.Errorf("no daemon is running at %s and daemon.auto_start is off", p.Socket)}
	}
	if err := a.startDaemon(ctx, c, p, cfg); err != nil {
		return nil, err
	}
	a.client = c
	return c, nil
}

// startDaemon starts a background daemon and waits for its health probe.
func (a *app) startDaemon(ctx context.Context, c *client.Client, p config.Paths, cfg config.Config) error {
	exe, err := a.env.Executable()
	if err != nil {
		return &unreachableError{fmt.Errorf("no daemon is running and the neuraphage binary cannot be found to start one: %w", err)}
	}
	if err := os.MkdirAll(p.LogDir, 0o700); err != nil {
		return &unreachableError{fmt.Errorf("no daemon is running and its log directory cannot be made: %w", err)}
	}
	outFile := filepath.Join(p.LogDir, "daemon.out")
	start, _ := os.Stat(outFile)
	proc, err := spawn.Detached(exe, a.env.Argv0, []string{"daemon", "start", "--foreground"}, outFile, secretNames(cfg))
	if err != nil {
		return &unreachableError{fmt.Errorf("no daemon is running and one could not be started: %w", err)}
	}
	deadline := time.Now().Add(time.Duration(cfg.Daemon.StartTimeoutSecs) * time.Second)
	wait := 10 * time.Millisecond
	for {
		if err := probe(ctx, c); err == nil {
			return nil
		}
		if exited, code := proc.Exited(); exited {
			return &unreachableError{fmt.Errorf("the daemon exited (code %d) before it was ready: %s", code, tail(outFile, start))}
		}
		if time.Now().After(deadline) {
			return &unreachableError{fmt.Errorf("the daemon (pid %d) did not answer within %ds (daemon.start_timeout_secs); see %s", proc.PID(), cfg.Daemon.StartTimeoutSecs, outFile)}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// tail returns what was appended to file since it had the size in before.
func tail(file string, before os.FileInfo) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return "no output (" + err.Error() + ")"
	}
	if before != nil && before.Size() <= int64(len(b)) {
		b = b[before.Size():]
	}
	s := strings.TrimSpace(string(b))
	s = strings.TrimPrefix(s, "neuraphage: ")
	if s == "" {
		return "no output"
	}
	return words.Tail(s, 2000)
}
