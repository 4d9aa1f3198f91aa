package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

//go:embed descriptions/record_learning.md
var recordLearningDescription string

// recordLearning is the record_learning tool: keeps a lesson for later
// tasks.
type recordLearning struct{}

var _ Tool = recordLearning{}

type recordLearningParams struct {
	Summary string   `json:"summary" desc:"The lesson in one sentence." min:"1"`
	Detail  string   `json:"detail,omitempty" desc:"Context, evidence and how to apply it."`
	Tags    []string `json:"tags,omitempty" desc:"A few lowercase keywords to find it by (language, tool, area of the code)."`
}

// Def describes record_learning.
func (recordLearning) Def() llm.ToolDef {
	return def[recordLearningParams]("record_learning", recordLearningDescription)
}

// Run records: the result carries the Learning.
func (recordLearning) Run(_ context.Context, _ *Env, input json.RawMessage) Result {
	p, err := decode[recordLearningParams](input)
	if err != nil {
		return invalid("record_learning", err)
	}
	var tags []string
	for _, t := range p.Tags {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return Result{
		Content:  "Learning recorded.",
		Learning: &Learning{Summary: strings.TrimSpace(p.Summary), Detail: strings.TrimSpace(p.Detail), Tags: tags},
	}
}
