package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

// WorkerArgs is what `neuraphage worker` passes to Env.RunWorker.
type WorkerArgs struct {
	Join, Token string
	// CA is the PEM file of the CA that signed the coordinator's
	// certificate (--ca).
	CA       string
	Labels   map[string]string
	Capacity int
}

// workerPIDFile is where a running worker writes its pid (the daemon
// package's WorkerPIDFile: run dir/worker.pid).
const workerPIDFile = "worker.pid"

func (a *app) newClusterCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "cluster", Short: "Coordinate workers on other machines (docs/cluster.md)", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	cmd.AddCommand(a.newClusterJoinInfoCmd(), a.newClusterStatusCmd())
	return cmd
}

func (a *app) newClusterJoinInfoCmd() *cobra.Command {
	var (
		asJSON bool
		labels string
	)
	cmd := &cobra.Command{
		Use:   "join-info",
		Short: "Print the URL and a fresh token for a new worker",
		Long: `join-info issues a token for one new worker and prints the command that joins it.
With --labels the worker has those labels only, whatever it declares.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			ls, err := parseLabels(labels)
			if err != nil {
				return err
			}
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			info, err := c.ClusterJoin(cmd.Context(), api.JoinRequest{Labels: ls})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, info)
			}
			fmt.Fprintf(out, "worker %s\nneuraphage worker --join %s --token %s", info.Worker, info.URL, info.Token)
			if labels != "" {
				fmt.Fprintf(out, " --labels %s", labels)
			}
			fmt.Fprintln(out)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&labels, "labels", "", "k=v,... the only labels the worker gets")
	return cmd
}

func (a *app) newClusterStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the workers, their capacity, tasks and the coordinator's lag",
		Args:  noArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			s, err := c.ClusterStatus(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), s)
			}
			writeClusterStatus(cmd.OutOrStdout(), s)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func writeClusterStatus(out io.Writer, s api.ClusterStatus) {
	fmt.Fprintf(out, "coordinator %s, lag %d\n", s.URL, s.Lag)
	if len(s.Workers) == 0 {
		fmt.Fprintln(out, "No worker has joined; `neuraphage cluster join-info` prints how.")
		return
	}
	for _, w := range s.Workers {
		state := "alive"
		switch {
		case !w.Alive:
			state = "lost"
		case w.Draining:
			state = "draining"
		}
		fmt.Fprintf(out, "%s  %-8s  %d/%d  %s  %s\n", w.Name, state, len(w.Tasks), w.Capacity,
			formatLabels(w.Labels), strings.Join(w.Tasks, " "))
	}
}

func formatLabels(ls map[string]string) string {
	if len(ls) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		parts = append(parts, k+"="+ls[k])
	}
	return strings.Join(parts, ",")
}

// parseLabels reads k=v,k=v.
func parseLabels(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return nil, usageErrorf("label %q is not k=v", kv)
		}
		out[k] = v
	}
	return out, nil
}

func (a *app) newWorkerCmd() *cobra.Command {
	var (
		args   WorkerArgs
		labels string
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run tasks for a coordinator (docs/cluster.md)",
		Long: `worker joins a coordinator's cluster and runs the tasks it sends, with the native
engine and the sandbox as configured in this home, until SIGTERM or SIGINT; ` + "`neuraphage worker drain`" + `
makes it finish its tasks, take no more and exit. The token may come from
NEURAPHAGE_WORKER_TOKEN instead of --token.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			ls, err := parseLabels(labels)
			if err != nil {
				return err
			}
			args.Labels = ls
			if args.Token == "" {
				args.Token = a.env.Getenv("NEURAPHAGE_WORKER_TOKEN")
			}
			if args.Join == "" || args.Token == "" {
				return usageErrorf("worker needs --join URL and --token T (`neuraphage cluster join-info` on the coordinator prints them)")
			}
			if args.Capacity < 1 {
				return usageErrorf("--capacity must be at least 1")
			}
			if a.env.RunWorker == nil {
				return errors.New("this build cannot run a worker")
			}
			p, err := a.getPaths()
			if err != nil {
				return err
			}
			cfg, err := a.getConfig()
			if err != nil {
				return err
			}
			if err := a.hideSecrets(cfg); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "worker joining %s\n", args.Join)
			return a.env.RunWorker(cmd.Context(), p, cfg, a.env.Getenv, args)
		}),
	}
	cmd.Flags().StringVar(&args.Join, "join", "", "the coordinator's NATS URL")
	cmd.Flags().StringVar(&args.Token, "token", "", "this worker's token")
	cmd.Flags().StringVar(&args.CA, "ca", "", "PEM file of the CA that signed the coordinator's certificate (cluster.tls_cert)")
	cmd.Flags().StringVar(&labels, "labels", "", "k=v,... what this worker offers (engines, gpu, ...)")
	cmd.Flags().IntVar(&args.Capacity, "capacity", 2, "tasks run at once")
	cmd.AddCommand(a.newWorkerDrainCmd())
	return cmd
}

func (a *app) newWorkerDrainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "drain",
		Short: "Make this home's worker finish its tasks, take no more, and exit",
		Args:  noArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			p, err := a.getPaths()
			if err != nil {
				return err
			}
			return drainWorker(cmd.Context(), filepath.Join(p.RunDir, workerPIDFile), cmd.OutOrStdout())
		}),
	}
}

// drainWorker signals the worker whose pid is in file (SIGUSR1).
func drainWorker(_ context.Context, file string, out io.Writer) error {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no worker runs for this home (%s is missing)", file)
	}
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return fmt.Errorf("%s holds no pid", file)
	}
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		return fmt.Errorf("signalling the worker (pid %d): %w", pid, err)
	}
	fmt.Fprintf(out, "worker %d draining (%s)\n", pid, time.Now().UTC().Format(time.RFC3339))
	return nil
}
