package daemon

import (
	"context"
	"os"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/providers"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// manifest returns the executor's Manifest hook: lifecycle.Evaluator under
// the user's sandbox policy, with the router tier's pass when
// sandbox.model_pass is set and a router model is configured (else the
// default, with a note saying why).
func (rt *runtime) manifest(cfg config.Sandbox, sb *taskSandbox, getenv func(string) string, set *providers.Set, setErr error) func(context.Context, task.Task, []string) lifecycle.Evaluation {
	ev := lifecycle.Evaluator{Policy: taskPolicy(cfg, sb, getenv)}
	note := ""
	if cfg.ModelPass {
		switch {
		case setErr != nil:
			note = "sandbox.model_pass is set but no model is configured: " + setErr.Error()
		default:
			c, err := set.Client(llm.TierRouter)
			if err != nil {
				note = "sandbox.model_pass is set but the router tier has no model: " + err.Error()
				break
			}
			tg, _ := set.Resolution().Target(llm.TierRouter)
			ev.Client, ev.Model = c, tg.Model
		}
	}
	return func(ctx context.Context, t task.Task, env []string) lifecycle.Evaluation {
		out := ev.Evaluate(ctx, t, env)
		if note != "" && out.Manifest.Note == "" {
			out.Manifest.Note = note
		}
		return out
	}
}

// taskPolicy is the user's sandbox policy as manifests see it: the bounds
// every manifest stays within, and the recovery strategy engines use for
// permission denials.
func taskPolicy(cfg config.Sandbox, sb *taskSandbox, getenv func(string) string) lifecycle.Policy {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return lifecycle.PolicyFrom(cfg, home, sb.launcher.DenyRead)
}
