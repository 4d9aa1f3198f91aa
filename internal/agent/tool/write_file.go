package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

//go:embed descriptions/write_file.md
var writeFileDescription string

// writeFile is the write_file tool: creates or replaces a file.
type writeFile struct{}

var _ Tool = writeFile{}

type writeFileParams struct {
	Path    string `json:"path" desc:"The file to write, relative to the working directory. Missing parent directories are created." min:"1"`
	Content string `json:"content" desc:"The whole new content of the file."`
}

// Def describes write_file.
func (writeFile) Def() llm.ToolDef { return def[writeFileParams]("write_file", writeFileDescription) }

// Run writes the file.
func (writeFile) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	p, err := decode[writeFileParams](input)
	if err != nil {
		return invalid("write_file", err)
	}
	if err := ctx.Err(); err != nil {
		return failed("writing %s: %v", p.Path, err)
	}
	abs, rel, err := resolve(env, p.Path)
	if err != nil {
		return failed("%v", err)
	}
	op := Modified
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		op = Created
	case err != nil:
		return failed("writing %s: %v", rel, err)
	case fi.IsDir():
		return failed("%s is a directory; give the path of a file inside it", rel)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return failed("creating the directories of %s: %v", rel, err)
	}
	// Writing in place keeps the mode, owner and hard links of an existing
	// file.
	if err := os.WriteFile(abs, []byte(p.Content), 0o644); err != nil {
		return failed("writing %s: %v", rel, err)
	}
	return Result{
		Content: fmt.Sprintf("wrote %d bytes to %s (%s)", len(p.Content), rel, op),
		Changed: []Change{{Path: rel, Op: op}},
	}
}
