package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/cluster"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/gitserve"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
)

// clusterNode is the coordinator's part of the cluster (docs/cluster.md):
// the embedded NATS server (unless cluster.nats_url names one), the
// coordinator's connection and the coordinator, whose engine runs the
// native engine's tasks on workers.
type clusterNode struct {
	srv    *cluster.Server
	git    *http.Server // the tasks' code for workers (gitserve); nil without cluster.git_listen
	gitLn  net.Listener
	nc     *nats.Conn
	coord  *cluster.Coordinator
	tokens *cluster.Tokens
	url    string
	kick   func()
}

// startCluster starts the coordinator's side when cluster.enabled.
func startCluster(ctx context.Context, cfg config.Config, p config.Paths, getenv func(string) string, st store.Store, log *slog.Logger) (*clusterNode, error) {
	c := cfg.Cluster
	if !c.Enabled {
		return nil, nil
	}
	dir := filepath.Join(p.DataDir, "cluster")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	tokens, err := cluster.OpenTokens(filepath.Join(dir, "tokens.json"))
	if err != nil {
		return nil, err
	}
	n := &clusterNode{tokens: tokens, kick: func() {}}
	url, internal := c.NatsURL, getenv("NEURAPHAGE_NATS_TOKEN")
	if url == "" {
		n.srv, err = cluster.StartServer(cluster.ServerOptions{Listen: c.Listen, StoreDir: filepath.Join(dir, "jetstream"),
			TLSCert: c.TLSCert, TLSKey: c.TLSKey, Tokens: tokens})
		if err != nil {
			return nil, err
		}
		url, internal = n.srv.URL(), n.srv.Internal
	}
	n.url = cmp.Or(c.Advertise, url)
	opts := []nats.Option{nats.Token(internal), nats.Name("neuraphage-coordinator"), nats.MaxReconnects(-1)}
	if n.srv != nil && n.srv.ClientTLS() != nil {
		opts = append(opts, nats.Secure(n.srv.ClientTLS()))
	}
	n.nc, err = nats.Connect(url, opts...)
	if err != nil {
		n.close()
		return nil, fmt.Errorf("connecting to the cluster's NATS server %s: %w", url, err)
	}
	var (
		gs     *gitserve.Server
		gitURL string
	)
	if c.GitListen != "" {
		gs = gitserve.New(gitserve.Options{Logger: log})
		if n.gitLn, err = net.Listen("tcp", c.GitListen); err != nil {
			n.close()
			return nil, fmt.Errorf("cluster.git_listen: %w", err)
		}
		scheme := "http"
		if c.TLSCert != "" {
			scheme = "https"
		}
		gitURL = cmp.Or(c.GitURL, scheme+"://"+n.gitLn.Addr().String())
		n.git = &http.Server{Handler: gs, ReadHeaderTimeout: 10 * time.Second}
	}
	n.coord, err = cluster.NewCoordinator(ctx, cluster.Options{
		Conn: n.nc, Tokens: tokens, Git: gs, GitURL: gitURL, Models: cfg.LLM, Keys: modelKeys(cfg.LLM, getenv),
		Heartbeat: time.Duration(c.HeartbeatMs) * time.Millisecond, Misses: c.HeartbeatMisses,
		Record: func(ctx context.Context, evs ...event.Event) error { return st.EmitEvents(ctx, evs...) },
		Kick:   func() { n.kick() },
		Logger: log.With("component", "cluster"),
	})
	if err != nil {
		n.close()
		return nil, err
	}
	log.Info("cluster coordinator started", "url", n.url)
	return n, nil
}

// serveGit serves the tasks' code until ctx ends.
func (n *clusterNode) serveGit(ctx context.Context, c config.Cluster) error {
	if n.git == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() {
		var err error
		if c.TLSCert != "" {
			err = n.git.ServeTLS(n.gitLn, c.TLSCert, c.TLSKey)
		} else {
			err = n.git.Serve(n.gitLn)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serving the tasks' code: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n.git.Shutdown(sctx)
		<-done
		return nil
	}
}

// close ends the connection and the embedded server.
func (n *clusterNode) close() {
	if n == nil {
		return
	}
	if n.gitLn != nil {
		n.gitLn.Close()
	}
	if n.nc != nil {
		n.nc.Close()
	}
	if n.srv != nil {
		n.srv.Shutdown()
	}
}

// modelKeys are the values of the environment variables the model
// settings read, for the workers.
func modelKeys(c llm.Config, getenv func(string) string) map[string]string {
	names := []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
		"GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL",
		c.Providers.Anthropic.APIKeyEnv, c.Providers.OpenAI.APIKeyEnv, c.Providers.Gemini.APIKeyEnv}
	out := map[string]string{}
	for _, k := range names {
		if v := getenv(k); k != "" && v != "" {
			out[k] = v
		}
	}
	return out
}

// clusterAPI serves /v1/cluster from the node.
type clusterAPI struct{ n *clusterNode }

// Status implements server.Cluster.
func (c clusterAPI) Status(ctx context.Context) api.ClusterStatus {
	s := c.n.coord.Status(ctx)
	out := api.ClusterStatus{URL: c.n.url, Lag: s.Lag, Workers: []api.ClusterWorker{}}
	for _, w := range s.Workers {
		tasks := make([]string, len(w.Running))
		for i, id := range w.Running {
			tasks[i] = string(id)
		}
		var reported []string
		for _, id := range w.Reported {
			reported = append(reported, string(id))
		}
		out.Workers = append(out.Workers, api.ClusterWorker{Name: w.Name, Alive: w.Alive, Draining: w.Draining,
			Labels: w.Labels, Capacity: w.Capacity, Tasks: tasks, Running: reported, LastSeen: w.LastSeen.UTC()})
	}
	return out
}

// Join implements server.Cluster.
func (c clusterAPI) Join(_ context.Context, req api.JoinRequest) (api.JoinInfo, error) {
	worker, token, err := c.n.tokens.Issue(req.Labels)
	if err != nil {
		return api.JoinInfo{}, err
	}
	return api.JoinInfo{URL: c.n.url, Token: token, Worker: worker, Labels: req.Labels}, nil
}
