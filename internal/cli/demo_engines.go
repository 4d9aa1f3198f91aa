package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// demoEngineNames are the external engines the demo runs one task on each,
// in the order shown.
var demoEngineNames = []string{"claude", "codex", "gemini"}

// demoEngineConfig points every external engine at the demo's scripted
// model server (which speaks the Anthropic, Responses and Gemini wire
// formats), with the demo's key: nothing leaves the machine.
func demoEngineConfig(cfg *config.Config, url, keyEnv string) {
	oa, gm := &cfg.LLM.Providers.OpenAI, &cfg.LLM.Providers.Gemini
	oa.BaseURL, oa.APIKeyEnv = url+"/v1", keyEnv
	gm.BaseURL, gm.APIKeyEnv = url, keyEnv
	// With a model named, Gemini CLI makes no routing request first.
	cfg.Engines.Gemini.Model = "gemini-2.5-flash"
}

// demoEngines runs one task on each external engine whose CLI is
// installed (the daemon's readiness), against the scripted model server;
// an engine whose CLI is missing gets its task on the native loop instead,
// with one line saying so and what to install. The demo installs nothing.
// It returns the tasks' IDs once all have finished.
func demoEngines(ctx context.Context, c *client.Client, repo string, out io.Writer) ([]task.ID, error) {
	st, err := c.Status(ctx)
	if err != nil {
		return nil, err
	}
	ready := map[string]api.EngineStatus{}
	for _, e := range st.Engines {
		ready[e.Name] = e
	}
	stream, err := c.Watch(ctx, event.Query{AfterID: -1})
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	fmt.Fprintf(out, "\nEngines: one task on each external agent CLI, in the same fleet\n")
	names := map[task.ID]string{}
	var ids []task.ID
	for _, name := range demoEngineNames {
		engine := name
		if e := ready[name]; !e.Ready {
			engine = ""
			reason := e.Reason
			if reason == "" {
				reason = "this daemon has no such engine"
			}
			fmt.Fprintf(out, "• %s is not available (%s); its task runs on the native loop\n", name, reason)
		}
		prio := 2
		t, err := c.CreateTask(ctx, api.CreateTaskRequest{Description: "Engine tour: say hello from " + name, Persona: "junior", Engine: engine, Priority: &prio, Repo: repo})
		if err != nil {
			return nil, err
		}
		names[t.ID] = name
		ids = append(ids, t.ID)
		fmt.Fprintf(out, "• created %s %q on engine %s\n", t.ID, t.Description, cmp.Or(string(t.Engine), "native"))
	}
	start := time.Now()
	line := func(id task.ID, s string) {
		fmt.Fprintf(out, "  %5.2fs  %s %-6s  %s\n", time.Since(start).Seconds(), id, names[id], s)
	}
	for done := 0; done < len(ids); {
		e, err := stream.Next()
		if err != nil {
			return nil, fmt.Errorf("watching the demo: %w", err)
		}
		if names[e.TaskID] == "" {
			continue
		}
		switch p := e.Payload.(type) {
		case event.TurnStarted:
			line(e.TaskID, describeEvent(e))
		case event.TaskStatus:
			line(e.TaskID, describeEvent(e))
			if p.To.Terminal() {
				if p.To != task.Completed {
					return nil, fmt.Errorf("the %s task ended %s: %s", names[e.TaskID], p.To, p.Reason)
				}
				done++
			}
		}
	}
	return ids, nil
}
