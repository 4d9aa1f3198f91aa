package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

//go:embed descriptions/glob.md
var globDescription string

// GlobLimit caps how many paths glob lists.
const GlobLimit = 1000

// globTool is the glob tool: the files whose paths match a pattern.
type globTool struct{}

var _ Tool = globTool{}

type globParams struct {
	Pattern string `json:"pattern" desc:"A glob pattern relative to the working directory, such as **/*.go or src/{a,b}/*.ts. ** matches any number of directories." min:"1"`
}

// Def describes glob.
func (globTool) Def() llm.ToolDef { return def[globParams]("glob", globDescription) }

// Run lists the matching files.
func (globTool) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	p, err := decode[globParams](input)
	if err != nil {
		return invalid("glob", err)
	}
	pat, err := parseGlob(p.Pattern)
	if err != nil {
		return failed("%v", err)
	}
	var matches []string
	err = walk(ctx, env, pat.base(), pat.mayContain, func(_, rel string, _ fs.DirEntry) error {
		if pat.match(rel) {
			matches = append(matches, rel)
		}
		return nil
	})
	if err != nil {
		return failed("%v", err)
	}
	if len(matches) == 0 {
		return Result{Content: fmt.Sprintf("no files match %s", p.Pattern)}
	}
	sort.Strings(matches)
	var out strings.Builder
	maxOut := env.maxOutput()
	shown := 0
	for _, m := range matches {
		if shown == GlobLimit || out.Len()+len(m)+1 > maxOut {
			break
		}
		out.WriteString(m)
		out.WriteByte('\n')
		shown++
	}
	if rest := len(matches) - shown; rest > 0 {
		fmt.Fprintf(&out, "[%d more files not shown; use a narrower pattern]\n", rest)
	}
	return Result{Content: out.String()}
}
