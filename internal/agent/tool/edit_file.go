package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

//go:embed descriptions/edit_file.md
var editFileDescription string

// editFile is the edit_file tool: replaces one exact piece of a file.
type editFile struct{}

var _ Tool = editFile{}

type editFileParams struct {
	Path string `json:"path" desc:"The file to edit, relative to the working directory." min:"1"`
	Old  string `json:"old" desc:"The exact text to replace, including whitespace and indentation; it must occur exactly once in the file." min:"1"`
	New  string `json:"new" desc:"The text to put in its place (may be empty to delete old)."`
}

// Def describes edit_file.
func (editFile) Def() llm.ToolDef { return def[editFileParams]("edit_file", editFileDescription) }

// Run edits the file.
func (editFile) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	p, err := decode[editFileParams](input)
	if err != nil {
		return invalid("edit_file", err)
	}
	if err := ctx.Err(); err != nil {
		return failed("editing %s: %v", p.Path, err)
	}
	if p.Old == p.New {
		return failed("old and new are the same text; nothing would change")
	}
	abs, rel, err := resolve(env, p.Path)
	if err != nil {
		return failed("%v", err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failed("%s does not exist; use write_file to create a file", rel)
	case err != nil:
		return failed("editing %s: %v", rel, err)
	case fi.IsDir():
		return failed("%s is a directory, not a file", rel)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return failed("reading %s: %v", rel, err)
	}
	content := string(data)
	switch n := strings.Count(content, p.Old); n {
	case 0:
		return failed("old text not found in %s. It must match the file exactly, including whitespace, indentation and line endings: read the file again with read_file and copy the text from it", rel)
	case 1:
	default:
		return failed("old text occurs %d times in %s (at lines %s); it must occur exactly once. Include more of the surrounding lines in old so that it matches only the place to change", n, rel, matchLines(content, p.Old))
	}
	at := strings.Index(content, p.Old)
	updated := content[:at] + p.New + content[at+len(p.Old):]
	if err := os.WriteFile(abs, []byte(updated), fi.Mode().Perm()); err != nil {
		return failed("writing %s: %v", rel, err)
	}
	first := strings.Count(content[:at], "\n") + 1
	last := first + strings.Count(p.New, "\n")
	lines := strconv.Itoa(first)
	if last > first {
		lines += "-" + strconv.Itoa(last)
	}
	return Result{
		Content: fmt.Sprintf("edited %s: replaced the text, now at line %s", rel, lines),
		Changed: []Change{{Path: rel, Op: Modified}},
	}
}

// matchLines lists the line numbers where old starts in content, at most ten.
func matchLines(content, old string) string {
	var lines []string
	line, from := 1, 0
	for len(lines) < 10 {
		i := strings.Index(content[from:], old)
		if i < 0 {
			break
		}
		line += strings.Count(content[from:from+i], "\n")
		lines = append(lines, strconv.Itoa(line))
		// Count the newlines of the match itself before searching on.
		line += strings.Count(old, "\n")
		from += i + len(old)
	}
	return strings.Join(lines, ", ")
}
