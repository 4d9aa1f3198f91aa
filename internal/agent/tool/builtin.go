package tool

import (
	"context"
	"encoding/json"
	"strings"
)

// Builtin returns the native agent's tools in a stable order: files, search,
// commands, then the tools that talk to the task's owner.
func Builtin() []Tool {
	return []Tool{
		readFile{},
		writeFile{},
		editFile{},
		globTool{},
		grepTool{},
		bashTool{},
		askUser{},
		completeTask{},
		failTask{},
		recordLearning{},
	}
}

// Find returns the tool in tools with the given name.
func Find(tools []Tool, name string) (Tool, bool) {
	for _, t := range tools {
		if t.Def().Name == name {
			return t, true
		}
	}
	return nil, false
}

// Call runs the tool in tools named name with input. An unknown name is an
// error result that lists the tools there are.
func Call(ctx context.Context, tools []Tool, env *Env, name string, input json.RawMessage) Result {
	t, ok := Find(tools, name)
	if !ok {
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.Def().Name
		}
		return failed("unknown tool %q; the tools are: %s", name, strings.Join(names, ", "))
	}
	return t.Run(ctx, env, input)
}
