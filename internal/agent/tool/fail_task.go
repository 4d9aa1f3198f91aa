package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

//go:embed descriptions/fail_task.md
var failTaskDescription string

// failTask is the fail_task tool: the task gives up.
type failTask struct{}

var _ Tool = failTask{}

type failTaskParams struct {
	Reason string `json:"reason" desc:"Why the task cannot be done, what was tried and what would unblock it." min:"1"`
}

// Def describes fail_task.
func (failTask) Def() llm.ToolDef { return def[failTaskParams]("fail_task", failTaskDescription) }

// Run fails: the result carries a Control of kind Fail.
func (failTask) Run(_ context.Context, _ *Env, input json.RawMessage) Result {
	p, err := decode[failTaskParams](input)
	if err != nil {
		return invalid("fail_task", err)
	}
	return Result{
		Content: "The task is marked failed.",
		Control: &Control{Kind: Fail, Text: strings.TrimSpace(p.Reason)},
	}
}
