package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Shell completion (cobra's __complete, behind `neuraphage completion SHELL`):
// task ids come from a running daemon (never started for it), persona names
// from personas.yaml, statuses from the task package, engines from the
// daemon, config keys from the config package. addCompletions wires them by
// the commands' argument names (ID, [ID], BLOCKER, NAME) and flag names
// (--task, --parent, --persona, --status, --engine), so a new command with
// those names completes without more code.
func (a *app) addCompletions(c *cobra.Command) {
	if c.ValidArgsFunction == nil {
		if fields := strings.Fields(c.Use); len(fields) > 1 {
			c.ValidArgsFunction = a.completeArgs(c, fields[1:])
		}
	}
	f := c.LocalNonPersistentFlags()
	for name, fn := range map[string]cobra.CompletionFunc{
		"task":    a.completeFlagTasks,
		"parent":  a.completeFlagTasks,
		"persona": a.completePersonas,
		"status":  completeStatuses,
		"engine":  a.completeEngines,
		"kind":    completeKinds,
	} {
		if f.Lookup(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, fn)
		}
	}
	for _, sub := range c.Commands() {
		a.addCompletions(sub)
	}
}

// completeArgs completes the positional argument named names[len(args)].
func (a *app) completeArgs(c *cobra.Command, names []string) cobra.CompletionFunc {
	personaCmd := c.Parent() != nil && c.Parent().Name() == "persona"
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) >= len(names) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		switch strings.Trim(names[len(args)], "[]") {
		case "ID", "BLOCKER":
			return a.completeTasks(cmd.Context(), toComplete)
		case "NAME":
			if personaCmd {
				return a.completePersonas(cmd, args, toComplete)
			}
		case "KEY":
			return config.Keys(), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveDefault
	}
}

func (a *app) completeFlagTasks(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return a.completeTasks(cmd.Context(), toComplete)
}

// completeTasks lists the ids of every task a running daemon knows, with
// their descriptions, unfinished ones first.
func (a *app) completeTasks(ctx context.Context, toComplete string) ([]string, cobra.ShellCompDirective) {
	c, ok := a.runningDaemon(ctx)
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ts, err := c.ListTasks(ctx, nil, true)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var open, done []string
	for _, t := range ts {
		if !strings.HasPrefix(string(t.ID), toComplete) {
			continue
		}
		line := string(t.ID) + "\t" + string(t.Status) + ": " + completionText(t.Description)
		if t.Status.Terminal() {
			done = append(done, line)
		} else {
			open = append(open, line)
		}
	}
	return append(open, done...), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// completionText is a description fit for a completion menu: one printable
// line, short.
func completionText(s string) string {
	s = strings.Join(strings.Fields(words.Printable(s)), " ")
	return truncate(s, 50)
}

func (a *app) completePersonas(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	s, _, err := a.loadPersonas()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, p := range s.List() {
		if p.Assignable() {
			out = append(out, p.Key+"\t"+completionText(p.Description))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func completeStatuses(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	// --status takes a comma-separated list: complete its last element.
	prefix := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix = toComplete[:i+1]
	}
	var out []string
	for _, s := range task.AllStatuses() {
		out = append(out, prefix+string(s))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

func completeKinds(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	prefix := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix = toComplete[:i+1]
	}
	var out []string
	for _, k := range event.Kinds() {
		out = append(out, prefix+string(k))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

func (a *app) completeEngines(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	c, ok := a.runningDaemon(cmd.Context())
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Second)
	defer cancel()
	st, err := c.Status(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, e := range st.Engines {
		if e.Ready {
			out = append(out, e.Name+"\tavailable")
		} else {
			out = append(out, e.Name+"\tunavailable: "+completionText(e.Reason))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// runningDaemon returns a client of the daemon when one answers; completion
// never starts one.
func (a *app) runningDaemon(ctx context.Context) (*client.Client, bool) {
	p, err := a.getPaths()
	if err != nil {
		return nil, false
	}
	c := client.New(p.Socket)
	if ctx == nil {
		ctx = context.Background()
	}
	if err := probe(ctx, c); err != nil {
		c.Close()
		return nil, false
	}
	return c, true
}
