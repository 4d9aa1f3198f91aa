package tool

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

//go:embed descriptions/read_file.md
var readFileDescription string

// DefaultReadLimit is how many lines read_file shows when the call names no
// limit.
const DefaultReadLimit = 2000

// maxLineBytes caps one line of read_file output; longer lines are cut.
const maxLineBytes = 2000

// readFile is the read_file tool: a text file's lines, numbered.
type readFile struct{}

var _ Tool = readFile{}

type readFileParams struct {
	Path   string `json:"path" desc:"The file to read, relative to the working directory." min:"1"`
	Offset int    `json:"offset,omitempty" desc:"The line number to start at (1-based). Default 1." min:"1"`
	Limit  int    `json:"limit,omitempty" desc:"How many lines to show at most. Default 2000." min:"1"`
}

// Def describes read_file.
func (readFile) Def() llm.ToolDef { return def[readFileParams]("read_file", readFileDescription) }

// Run reads the file.
func (readFile) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	p, err := decode[readFileParams](input)
	if err != nil {
		return invalid("read_file", err)
	}
	abs, rel, err := resolve(env, p.Path)
	if err != nil {
		return failed("%v", err)
	}
	f, err := os.Open(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return failed("%s does not exist; use glob to find files", rel)
		}
		return failed("opening %s: %v", rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return failed("reading %s: %v", rel, err)
	}
	if fi.IsDir() {
		return failed("%s is a directory; use glob to list its files", rel)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	if head, _ := r.Peek(8000); bytes.IndexByte(head, 0) >= 0 {
		return failed("%s is a binary file (%d bytes); read_file shows text files only", rel, fi.Size())
	}
	offset, limit := max(p.Offset, 1), p.Limit
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	maxOut := env.maxOutput()

	var out strings.Builder
	line, shown, last := 0, 0, 0
	truncated := false // stopped early for size
	for {
		if ctx.Err() != nil {
			return failed("reading %s: %v", rel, ctx.Err())
		}
		text, n, err := readLine(r, maxLineBytes)
		if err == io.EOF {
			break
		}
		if err != nil {
			return failed("reading %s: %v", rel, err)
		}
		line++
		if line < offset || truncated || shown >= limit {
			continue // keep counting lines for the note
		}
		if n > maxLineBytes {
			text = fmt.Sprintf("%s... [line cut: %d bytes]", cutUTF8(text, maxLineBytes), n)
		}
		entry := fmt.Sprintf("%6d\t%s\n", line, text)
		if out.Len()+len(entry) > maxOut && shown > 0 {
			truncated = true
			continue
		}
		out.WriteString(entry)
		shown++
		last = line
	}
	total := line
	switch {
	case total == 0:
		return Result{Content: fmt.Sprintf("%s is empty", rel)}
	case offset > total:
		return failed("%s has %d lines; offset %d is past the end", rel, total, offset)
	}
	if last < total {
		why := "limit"
		if truncated {
			why = "output size limit"
		}
		fmt.Fprintf(&out, "\n[showing lines %d-%d of %d (%s reached); call read_file with offset=%d to read further]\n", offset, last, total, why, last+1)
	}
	return Result{Content: out.String()}
}

// readLine returns the start of the next line (at most keep bytes, cut at a
// rune boundary) without its line ending, and the line's full length.
func readLine(r *bufio.Reader, keep int) (string, int, error) {
	var b []byte
	n := 0
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			if err == io.EOF && n > 0 {
				return string(b), n, nil
			}
			return "", 0, err
		}
		n += len(chunk)
		if room := keep + utf8.UTFMax - len(b); room > 0 {
			b = append(b, chunk[:min(room, len(chunk))]...)
		}
		if !isPrefix {
			return string(b), n, nil
		}
	}
}

// cutUTF8 returns at most n bytes of s, not splitting a rune.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
