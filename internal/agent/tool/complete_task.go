package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

//go:embed descriptions/complete_task.md
var completeTaskDescription string

// completeTask is the complete_task tool: the task is done.
type completeTask struct{}

var _ Tool = completeTask{}

type completeTaskParams struct {
	Summary string `json:"summary" desc:"What was done, what changed and anything the user should check." min:"1"`
}

// Def describes complete_task.
func (completeTask) Def() llm.ToolDef {
	return def[completeTaskParams]("complete_task", completeTaskDescription)
}

// Run completes: the result carries a Control of kind Complete.
func (completeTask) Run(_ context.Context, _ *Env, input json.RawMessage) Result {
	p, err := decode[completeTaskParams](input)
	if err != nil {
		return invalid("complete_task", err)
	}
	return Result{
		Content: "The task is marked complete.",
		Control: &Control{Kind: Complete, Text: strings.TrimSpace(p.Summary)},
	}
}
