package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

//go:embed descriptions/ask_user.md
var askUserDescription string

// askUser is the ask_user tool: the task waits for the user's answer.
type askUser struct{}

var _ Tool = askUser{}

type askUserParams struct {
	Question string `json:"question" desc:"The question, complete enough to answer without other context." min:"1"`
}

// Def describes ask_user.
func (askUser) Def() llm.ToolDef { return def[askUserParams]("ask_user", askUserDescription) }

// Run asks: the result carries a Control of kind AskUser.
func (askUser) Run(_ context.Context, _ *Env, input json.RawMessage) Result {
	p, err := decode[askUserParams](input)
	if err != nil {
		return invalid("ask_user", err)
	}
	q := strings.TrimSpace(p.Question)
	return Result{
		Content: "The question was sent to the user; their answer will come as the next message.",
		Control: &Control{Kind: AskUser, Text: q},
	}
}
