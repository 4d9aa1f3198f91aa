package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func searchTree(t *testing.T) string {
	t.Helper()
	dir := tree(t, map[string]string{
		"main.go":                 "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
		"README.md":               "# Hello\nsee main.go\n",
		"internal/a/a.go":         "package a\n\n// Hello says hello.\nfunc Hello() {}\n",
		"internal/a/a_test.go":    "package a\n",
		"internal/b/deep/b.go":    "package deep\n",
		"internal/b/deep/b.ts":    "hello()\n",
		"web/app.tsx":             "hello\n",
		"bin/tool":                "\x00\x01hello",
		".git/config":             "hello\n",
		"with space/file name.go": "package x // hello\n",
	})
	outside := t.TempDir()
	writeTestFile(t, outside, "out.go", "hello outside\n")
	symlink(t, outside, filepath.Join(dir, "outlink"))
	symlink(t, filepath.Join(outside, "out.go"), filepath.Join(dir, "outfile.go"))
	symlink(t, "internal/a", filepath.Join(dir, "inlink"))
	return dir
}

func TestGlob(t *testing.T) {
	t.Parallel()
	dir := searchTree(t)
	tests := []struct {
		pattern string
		want    string
		isError bool
	}{
		{"*.go", "main.go\noutfile.go\n", false},
		{"**/*.go", "internal/a/a.go\ninternal/a/a_test.go\ninternal/b/deep/b.go\nmain.go\noutfile.go\nwith space/file name.go\n", false},
		{"internal/**/*.go", "internal/a/a.go\ninternal/a/a_test.go\ninternal/b/deep/b.go\n", false},
		{"internal/**", "internal/a/a.go\ninternal/a/a_test.go\ninternal/b/deep/b.go\ninternal/b/deep/b.ts\n", false},
		{"internal/*/*_test.go", "internal/a/a_test.go\n", false},
		{"./internal/a/a.go", "internal/a/a.go\n", false},
		{"**/*.{ts,tsx}", "internal/b/deep/b.ts\nweb/app.tsx\n", false},
		{"{web,internal/a}/*", "internal/a/a.go\ninternal/a/a_test.go\nweb/app.tsx\n", false},
		{"README*", "README.md\n", false},
		{"inlink/*.go", "inlink/a.go\ninlink/a_test.go\n", false}, // a symlinked directory inside keeps its name
		{"in*", "inlink\n", false},                       // symlinks are listed, not followed
		{"**/config", "no files match **/config", false}, // .git is skipped
		{"outlink/*", "no files match outlink/*", true},  // a symlinked directory outside is refused
		{"*.py", "no files match *.py", false},
		{"nope/**/*.go", "no files match nope/**/*.go", false},
		{"../*", "leaves the working directory", true},
		{"/etc/*", "is absolute", true},
		{"[", "malformed", true},
		{"{a,b", "without its }", true},
		{"a**b/*", "whole path segment", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			t.Parallel()
			res := call(t, globTool{}, &Env{Dir: dir}, map[string]any{"pattern": tt.pattern})
			if tt.isError {
				if !res.IsError {
					t.Errorf("got %q, want an error", res.Content)
				}
				if tt.pattern != "outlink/*" && !strings.Contains(res.Content, tt.want) {
					t.Errorf("error %q does not say %q", res.Content, tt.want)
				}
				return
			}
			if res.IsError || res.Content != tt.want {
				t.Errorf("got %q (IsError %v), want %q", res.Content, res.IsError, tt.want)
			}
		})
	}
}

func TestGlobCap(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("f%02d.txt", i)] = ""
	}
	dir := tree(t, files)
	res := call(t, globTool{}, &Env{Dir: dir, MaxOutput: 40}, map[string]any{"pattern": "*.txt"})
	if res.IsError || !strings.HasPrefix(res.Content, "f00.txt\nf01.txt\n") || !strings.Contains(res.Content, "[45 more files not shown; use a narrower pattern]") {
		t.Errorf("got %q", res.Content)
	}
}

func TestGrep(t *testing.T) {
	t.Parallel()
	dir := searchTree(t)
	tests := []struct {
		name    string
		input   map[string]any
		want    string
		isError bool
	}{
		{name: "everywhere", input: map[string]any{"pattern": "(?i)hello"}, want: "README.md:1:# Hello\ninternal/a/a.go:3:// Hello says hello.\ninternal/a/a.go:4:func Hello() {}\ninternal/b/deep/b.ts:1:hello()\nmain.go:4:\tprintln(\"hello\")\nweb/app.tsx:1:hello\nwith space/file name.go:1:package x // hello\n"},
		{name: "case sensitive", input: map[string]any{"pattern": "Hello"}, want: "README.md:1:# Hello\ninternal/a/a.go:3:// Hello says hello.\ninternal/a/a.go:4:func Hello() {}\n"},
		{name: "in a directory", input: map[string]any{"pattern": "package", "path": "internal/b"}, want: "internal/b/deep/b.go:1:package deep\n"},
		{name: "in a file", input: map[string]any{"pattern": "main", "path": "main.go"}, want: "main.go:1:package main\nmain.go:3:func main() {\n"},
		{name: "glob on names", input: map[string]any{"pattern": "^package", "glob": "*_test.go"}, want: "internal/a/a_test.go:1:package a\n"},
		{name: "glob on paths", input: map[string]any{"pattern": "hello", "glob": "internal/**/*.{ts,go}"}, want: "internal/a/a.go:3:// Hello says hello.\ninternal/b/deep/b.ts:1:hello()\n"},
		{name: "through a symlinked directory inside", input: map[string]any{"pattern": "Hello", "path": "inlink"}, want: "inlink/a.go:3:// Hello says hello.\ninlink/a.go:4:func Hello() {}\n"},
		{name: "absolute path inside", input: map[string]any{"pattern": "deep", "path": filepath.Join(dir, "internal")}, want: "internal/b/deep/b.go:1:package deep\n"},
		{name: "no matches", input: map[string]any{"pattern": "zebra"}, want: "no matches\n"},
		{name: "bad regexp", input: map[string]any{"pattern": "(a"}, want: "not a valid Go (RE2) regular expression", isError: true},
		{name: "outside", input: map[string]any{"pattern": "x", "path": "../"}, want: "outside the working directory", isError: true},
		{name: "through symlink outside", input: map[string]any{"pattern": "x", "path": "outlink"}, want: "goes through a symlink", isError: true},
		{name: "bad glob", input: map[string]any{"pattern": "x", "glob": "["}, want: "malformed", isError: true},
		{name: "missing pattern", input: map[string]any{"path": "."}, want: `missing required field "pattern"`, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, grepTool{}, &Env{Dir: dir}, tt.input)
			if tt.isError {
				wantResult(t, res, true, tt.want)
				return
			}
			if res.IsError || res.Content != tt.want {
				t.Errorf("got %q (IsError %v), want %q", res.Content, res.IsError, tt.want)
			}
		})
	}
}

func TestGrepCapAndLongLines(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&many, "match %d\n", i)
	}
	dir := tree(t, map[string]string{"many.txt": many.String(), "wide.txt": "match " + strings.Repeat("x", 2000) + "\n"})
	res := call(t, grepTool{}, &Env{Dir: dir, MaxOutput: 200}, map[string]any{"pattern": "match", "path": "many.txt"})
	wantResult(t, res, false, "many.txt:1:match 0\n", "[more matches not shown")
	if len(res.Content) > 400 {
		t.Errorf("content of %d bytes for a cap of 200", len(res.Content))
	}
	res = call(t, grepTool{}, &Env{Dir: dir}, map[string]any{"pattern": "match", "path": "wide.txt"})
	wantResult(t, res, false, "[line cut]")
	if len(res.Content) > 600 {
		t.Errorf("a long line was not cut: %d bytes", len(res.Content))
	}
}

func TestGlobAndGrepStopWhenCancelled(t *testing.T) {
	t.Parallel()
	dir := searchTree(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for tl, input := range map[Tool]string{globTool{}: `{"pattern":"**/*.go"}`, grepTool{}: `{"pattern":"hello"}`} {
		res := tl.Run(ctx, &Env{Dir: dir}, json.RawMessage(input))
		wantResult(t, res, true, "context canceled")
	}
}

func TestControlTools(t *testing.T) {
	t.Parallel()
	env := &Env{Dir: t.TempDir()}
	tests := []struct {
		tool  Tool
		input string
		want  Control
	}{
		{askUser{}, `{"question":" Which database? "}`, Control{Kind: AskUser, Text: "Which database?"}},
		{completeTask{}, `{"summary":"Done: added X."}`, Control{Kind: Complete, Text: "Done: added X."}},
		{failTask{}, `{"reason":"The API key is missing."}`, Control{Kind: Fail, Text: "The API key is missing."}},
	}
	for _, tt := range tests {
		res := call(t, tt.tool, env, tt.input)
		if res.IsError || res.Control == nil || *res.Control != tt.want {
			t.Errorf("%s: got %+v, want control %+v", tt.tool.Def().Name, res, tt.want)
		}
		// Required text: missing or blank is an error, and no control.
		for _, bad := range []string{`{}`, `{"question":"","summary":"","reason":""}`} {
			res := call(t, tt.tool, env, bad)
			if !res.IsError || res.Control != nil {
				t.Errorf("%s(%s): got %+v, want an error", tt.tool.Def().Name, bad, res)
			}
		}
	}
}

func TestRecordLearning(t *testing.T) {
	t.Parallel()
	env := &Env{Dir: t.TempDir()}
	res := call(t, recordLearning{}, env, `{"summary":"Run make gen before tests.","detail":"The mocks are generated.","tags":["build"," ",""]}`)
	want := Learning{Summary: "Run make gen before tests.", Detail: "The mocks are generated.", Tags: []string{"build"}}
	if res.IsError || res.Learning == nil || res.Learning.Summary != want.Summary || res.Learning.Detail != want.Detail || strings.Join(res.Learning.Tags, ",") != "build" {
		t.Errorf("got %+v, want learning %+v", res, want)
	}
	res = call(t, recordLearning{}, env, `{"summary":"Only a summary."}`)
	if res.IsError || res.Learning == nil || res.Learning.Summary != "Only a summary." {
		t.Errorf("summary only: %+v", res)
	}
	for _, bad := range []string{`{"detail":"no summary"}`, `{"summary":"x","tags":"build"}`} {
		if res := call(t, recordLearning{}, env, bad); !res.IsError || res.Learning != nil {
			t.Errorf("%s: got %+v, want an error", bad, res)
		}
	}
}
