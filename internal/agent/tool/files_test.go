package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wantResult checks a result: its error flag and substrings of its content.
func wantResult(t *testing.T, res Result, isError bool, contains ...string) {
	t.Helper()
	if res.IsError != isError {
		t.Errorf("IsError = %v, want %v; content:\n%s", res.IsError, isError, res.Content)
	}
	for _, c := range contains {
		if !strings.Contains(res.Content, c) {
			t.Errorf("content does not contain %q:\n%s", c, res.Content)
		}
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	dir := tree(t, map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"noeol.txt": "one\ntwo",
		"crlf.txt":  "one\r\ntwo\r\n",
		"empty.txt": "",
		"long.txt":  long.String(),
		"wide.txt":  strings.Repeat("é", 3000) + "\nnext\n",
		"bin.dat":   "abc\x00def",
		"sub/x.txt": "x\n",
	})
	env := &Env{Dir: dir}
	tests := []struct {
		name     string
		env      *Env
		input    any
		isError  bool
		contains []string
		exact    string
	}{
		{name: "whole file", input: map[string]any{"path": "a.txt"}, exact: "     1\tone\n     2\ttwo\n     3\tthree\n"},
		{name: "no final newline", input: map[string]any{"path": "noeol.txt"}, exact: "     1\tone\n     2\ttwo\n"},
		{name: "crlf", input: map[string]any{"path": "crlf.txt"}, exact: "     1\tone\n     2\ttwo\n"},
		{name: "offset and limit", input: map[string]any{"path": "a.txt", "offset": 2, "limit": 1}, contains: []string{"     2\ttwo\n", "[showing lines 2-2 of 3 (limit reached); call read_file with offset=3 to read further]"}},
		{name: "offset to the end", input: map[string]any{"path": "a.txt", "offset": 3}, exact: "     3\tthree\n"},
		{name: "default limit", env: &Env{Dir: dir, MaxOutput: 1 << 20}, input: map[string]any{"path": "long.txt"}, contains: []string{"  2000\tline 2000\n", "[showing lines 1-2000 of 3000 (limit reached); call read_file with offset=2001"}},
		{name: "output cap", env: &Env{Dir: dir, MaxOutput: 100}, input: map[string]any{"path": "long.txt"}, contains: []string{"     1\tline 1\n", "(output size limit reached); call read_file with offset="}},
		{name: "long line cut", input: map[string]any{"path": "wide.txt"}, contains: []string{"... [line cut: 6000 bytes]", "     2\tnext"}},
		{name: "empty file", input: map[string]any{"path": "empty.txt"}, exact: "empty.txt is empty"},
		{name: "offset past the end", input: map[string]any{"path": "a.txt", "offset": 10}, isError: true, contains: []string{"a.txt has 3 lines; offset 10 is past the end"}},
		{name: "missing file", input: map[string]any{"path": "nope.txt"}, isError: true, contains: []string{"nope.txt does not exist"}},
		{name: "directory", input: map[string]any{"path": "sub"}, isError: true, contains: []string{"sub is a directory"}},
		{name: "binary", input: map[string]any{"path": "bin.dat"}, isError: true, contains: []string{"binary file"}},
		{name: "outside", input: map[string]any{"path": "../x"}, isError: true, contains: []string{"outside the working directory"}},
		{name: "missing path", input: map[string]any{}, isError: true, contains: []string{`missing required field "path"`}},
		{name: "offset zero", input: map[string]any{"path": "a.txt", "offset": 0}, isError: true, contains: []string{`"offset" must be at least 1`}},
		{name: "offset as string", input: map[string]any{"path": "a.txt", "offset": "2"}, isError: true, contains: []string{`"offset" must be an integer, not a string`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := env
			if tt.env != nil {
				e = tt.env
			}
			res := call(t, readFile{}, e, tt.input)
			wantResult(t, res, tt.isError, tt.contains...)
			if tt.exact != "" && res.Content != tt.exact {
				t.Errorf("content:\n%q\nwant\n%q", res.Content, tt.exact)
			}
			if len(res.Changed) > 0 {
				t.Errorf("read_file reported changes %v", res.Changed)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		input    map[string]any
		isError  bool
		contains string
		changed  []Change
		file     string // the path whose content must now be input["content"]
	}{
		{name: "create", input: map[string]any{"path": "new.txt", "content": "hello"}, contains: "wrote 5 bytes to new.txt (created)", changed: []Change{{Path: "new.txt", Op: Created}}, file: "new.txt"},
		{name: "create with parents", input: map[string]any{"path": "a/b/c.txt", "content": "x"}, changed: []Change{{Path: "a/b/c.txt", Op: Created}}, file: "a/b/c.txt"},
		{name: "replace", input: map[string]any{"path": "old.txt", "content": "new"}, contains: "(modified)", changed: []Change{{Path: "old.txt", Op: Modified}}, file: "old.txt"},
		{name: "empty content", input: map[string]any{"path": "old.txt", "content": ""}, changed: []Change{{Path: "old.txt", Op: Modified}}, file: "old.txt"},
		{name: "through a symlink inside", input: map[string]any{"path": "link-in", "content": "via link"}, changed: []Change{{Path: "old.txt", Op: Modified}}, file: "old.txt"},
		{name: "directory", input: map[string]any{"path": "sub", "content": "x"}, isError: true, contains: "sub is a directory"},
		{name: "dot dot", input: map[string]any{"path": "../escape.txt", "content": "x"}, isError: true, contains: "outside the working directory"},
		{name: "absolute outside", input: map[string]any{"path": "/tmp/neuraphage-escape.txt", "content": "x"}, isError: true, contains: "outside the working directory"},
		{name: "symlinked dir outside", input: map[string]any{"path": "dirlink-out/new.txt", "content": "x"}, isError: true, contains: "goes through a symlink"},
		{name: "dangling symlink outside", input: map[string]any{"path": "dangling-out", "content": "x"}, isError: true, contains: "goes through a symlink"},
		{name: "missing content", input: map[string]any{"path": "x.txt"}, isError: true, contains: `missing required field "content"`},
		{name: "content not a string", input: map[string]any{"path": "x.txt", "content": 3}, isError: true, contains: `"content" must be a string, not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			dir := filepath.Join(base, "work")
			outside := filepath.Join(base, "outside")
			writeTestFile(t, dir, "old.txt", "old content\n")
			writeTestFile(t, dir, "sub/x", "")
			writeTestFile(t, outside, "keep", "")
			symlink(t, "old.txt", filepath.Join(dir, "link-in"))
			symlink(t, outside, filepath.Join(dir, "dirlink-out"))
			symlink(t, filepath.Join(outside, "created-through-link"), filepath.Join(dir, "dangling-out"))
			res := call(t, writeFile{}, &Env{Dir: dir}, tt.input)
			wantResult(t, res, tt.isError, tt.contains)
			if diff := cmp.Diff(tt.changed, res.Changed); diff != "" {
				t.Errorf("Changed (-want +got):\n%s", diff)
			}
			if tt.file != "" {
				if got := readTestFile(t, dir, tt.file); got != tt.input["content"] {
					t.Errorf("%s = %q, want %q", tt.file, got, tt.input["content"])
				}
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 1 {
				t.Errorf("something was written outside: %v", entries)
			}
			if _, err := os.Stat(filepath.Join(base, "escape.txt")); err == nil {
				t.Error("../escape.txt was written")
			}
		})
	}
}

func TestWriteFileKeepsMode(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := call(t, writeFile{}, &Env{Dir: dir}, map[string]any{"path": "run.sh", "content": "#!/bin/sh\necho hi\n"})
	wantResult(t, res, false)
	fi, err := os.Stat(filepath.Join(dir, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode after write: %v, %v", fi.Mode(), err)
	}
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	const src = "package x\n\nfunc a() {\n\treturn\n}\n\nfunc b() {\n\treturn\n}\n"
	tests := []struct {
		name     string
		input    map[string]any
		isError  bool
		contains []string
		want     string // the file afterwards
	}{
		{name: "unique match", input: map[string]any{"path": "x.go", "old": "func a() {\n\treturn", "new": "func a() {\n\tprintln()\n\treturn"},
			contains: []string{"edited x.go", "line 3-5"}, want: strings.Replace(src, "func a() {\n\treturn", "func a() {\n\tprintln()\n\treturn", 1)},
		{name: "delete", input: map[string]any{"path": "x.go", "old": "\nfunc b() {\n\treturn\n}\n", "new": ""}, want: "package x\n\nfunc a() {\n\treturn\n}\n"},
		{name: "no match", input: map[string]any{"path": "x.go", "old": "func c()", "new": "x"}, isError: true,
			contains: []string{"old text not found in x.go", "read the file again"}, want: src},
		{name: "whitespace differs", input: map[string]any{"path": "x.go", "old": "func a() {\n    return", "new": "x"}, isError: true,
			contains: []string{"not found", "whitespace"}, want: src},
		{name: "several matches", input: map[string]any{"path": "x.go", "old": "\treturn\n}", "new": "\treturn 1\n}"}, isError: true,
			contains: []string{"occurs 2 times in x.go (at lines 4, 8)", "Include more of the surrounding lines"}, want: src},
		{name: "same text", input: map[string]any{"path": "x.go", "old": "package x", "new": "package x"}, isError: true, contains: []string{"the same"}, want: src},
		{name: "empty old", input: map[string]any{"path": "x.go", "old": "", "new": "x"}, isError: true, contains: []string{`"old" must not be empty`}, want: src},
		{name: "missing new", input: map[string]any{"path": "x.go", "old": "package x"}, isError: true, contains: []string{`missing required field "new"`}, want: src},
		{name: "missing file", input: map[string]any{"path": "y.go", "old": "a", "new": "b"}, isError: true, contains: []string{"y.go does not exist", "write_file"}, want: src},
		{name: "outside", input: map[string]any{"path": "../y.go", "old": "a", "new": "b"}, isError: true, contains: []string{"outside"}, want: src},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tree(t, map[string]string{"x.go": src})
			res := call(t, editFile{}, &Env{Dir: dir}, tt.input)
			wantResult(t, res, tt.isError, tt.contains...)
			if got := readTestFile(t, dir, "x.go"); got != tt.want {
				t.Errorf("x.go:\n%s\nwant:\n%s", got, tt.want)
			}
			var wantChanged []Change
			if !tt.isError {
				wantChanged = []Change{{Path: "x.go", Op: Modified}}
			}
			if diff := cmp.Diff(wantChanged, res.Changed); diff != "" {
				t.Errorf("Changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEditFileThroughSymlinkOutside(t *testing.T) {
	t.Parallel()
	dir, outside := confined(t, false)
	res := call(t, editFile{}, &Env{Dir: dir}, map[string]any{"path": "link-out", "old": "secret", "new": "leaked"})
	wantResult(t, res, true, "goes through a symlink")
	if got := readTestFile(t, outside, "secret.txt"); got != "secret\n" {
		t.Errorf("secret.txt = %q", got)
	}
}
