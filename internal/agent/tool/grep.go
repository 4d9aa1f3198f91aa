package tool

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

//go:embed descriptions/grep.md
var grepDescription string

const (
	// grepMaxLine cuts matching lines longer than this.
	grepMaxLine = 500
	// grepMaxFile: larger files are skipped (and counted).
	grepMaxFile = 32 << 20
	// binarySniff is how much of a file is searched for a NUL byte to call
	// it binary, as git and grep do.
	binarySniff = 8000
)

// grepTool is the grep tool: lines matching a regular expression.
type grepTool struct{}

var _ Tool = grepTool{}

type grepParams struct {
	Pattern string `json:"pattern" desc:"A Go (RE2) regular expression, matched against each line. Use (?i) for case-insensitive." min:"1"`
	Path    string `json:"path,omitempty" desc:"A file or directory to search, relative to the working directory. Default: the whole working directory."`
	Glob    string `json:"glob,omitempty" desc:"Only search files matching this glob: *.go matches file names anywhere; a pattern with a slash (src/**/*.ts) matches paths relative to the working directory."`
}

// Def describes grep.
func (grepTool) Def() llm.ToolDef { return def[grepParams]("grep", grepDescription) }

// Run searches.
func (grepTool) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	p, err := decode[grepParams](input)
	if err != nil {
		return invalid("grep", err)
	}
	re, err := regexp.Compile(p.Pattern)
	if err != nil {
		return failed("pattern %q is not a valid Go (RE2) regular expression: %v", p.Pattern, err)
	}
	filter := func(string) bool { return true }
	if p.Glob != "" {
		pat, err := parseGlob(p.Glob)
		if err != nil {
			return failed("glob: %v", err)
		}
		if strings.Contains(p.Glob, "/") {
			filter = pat.match
		} else {
			filter = func(rel string) bool { return pat.match(path.Base(rel)) }
		}
	}
	base := p.Path
	if base == "" {
		base = "."
	}
	if _, _, err := resolve(env, base); err != nil {
		return failed("%v", err)
	}
	maxOut := env.maxOutput()
	var out strings.Builder
	matches, skippedLarge := 0, 0
	full := false
	err = walk(ctx, env, base, func(string) bool { return true }, func(abs, rel string, d fs.DirEntry) error {
		if !d.Type().IsRegular() || !filter(rel) {
			return nil // symlinks are not followed: they could lead outside
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if info.Size() > grepMaxFile {
			skippedLarge++
			return nil
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return nil
		}
		if bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 {
			return nil
		}
		for n, line := 1, data; len(line) > 0; n++ {
			text := line
			if i := bytes.IndexByte(line, '\n'); i >= 0 {
				text, line = line[:i], line[i+1:]
			} else {
				line = nil
			}
			text = bytes.TrimSuffix(text, []byte("\r"))
			if !re.Match(text) {
				continue
			}
			s := string(text)
			if len(s) > grepMaxLine {
				s = cutUTF8(s, grepMaxLine) + " [line cut]"
			}
			entry := fmt.Sprintf("%s:%d:%s\n", rel, n, s)
			if out.Len()+len(entry) > maxOut {
				full = true
				return errStop
			}
			out.WriteString(entry)
			matches++
		}
		return nil
	})
	if err != nil {
		return failed("searching: %v", err)
	}
	if matches == 0 {
		out.WriteString("no matches\n")
	}
	if full {
		out.WriteString("[more matches not shown: output limit reached; narrow the pattern, path or glob]\n")
	}
	if skippedLarge > 0 {
		fmt.Fprintf(&out, "[%d files larger than %d MiB skipped]\n", skippedLarge, grepMaxFile>>20)
	}
	return Result{Content: out.String()}
}
