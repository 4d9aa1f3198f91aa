package stuck

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCanonicalCommand(t *testing.T) {
	t.Parallel()
	const root = "/w/t-abcde"
	tests := []struct {
		name string
		in   []string // all canonicalize to want
		want string
	}{
		{"whitespace collapses", []string{"go test ./...", "go  test\t./...  ", "  go test   ./..."}, "go test ./..."},
		{"quotes are dropped", []string{`go test "./..."`, `go test './...'`, `"go" test ./...`}, "go test ./..."},
		{"a Go package pattern is not a path to clean", []string{"go vet ./internal/pay/...", "go vet /w/t-abcde/internal/pay/..."}, "go vet ./internal/pay/..."},
		{"a quoted word keeps its spaces", []string{`echo "a  b"`, `echo 'a  b'`}, "echo a  b"},
		{"a backslash escapes", []string{`echo a\ b`, `echo "a b"`}, "echo a b"},
		{"flags with no value sort", []string{"ls -la -h", "ls -h -la", "ls  -h  '-la'"}, "ls -h -la"},
		{"--name=value flags sort", []string{"go test -count=1 -race=true x", "go test -race=true -count=1 x"}, "go test x -count=1 -race=true"},
		{"a flag before another flag sorts", []string{"git log --oneline -n 5", "git log -n 5 --oneline"}, "git log -n 5 --oneline"},
		{"a flag that may take the next word stays", []string{"head -n 5 a.go"}, "head -n 5 a.go"},
		{"-run keeps its value", []string{"go test -run TestX -v ./..."}, "go test -run TestX -v ./..."},
		{"the command word is never a flag to move", []string{"-x -a"}, "-x -a"},
		{"&& splits simple commands", []string{"go build ./... && go test ./...", "go build ./...&&go test ./..."}, "go build ./... && go test ./..."},
		{"flags do not move across &&", []string{"a -y -x && b -z"}, "a -x -y && b -z"},
		{"pipes split", []string{"cat a | grep b", "cat a|grep b"}, "cat a | grep b"},
		{"other operators", []string{"a || b; c & d", "a||b ;c&d"}, "a || b ; c & d"},
		{"the worktree becomes relative", []string{"cat /w/t-abcde/a/../b.go", "cat ./b.go", "cat b.go"}, "cat b.go"},
		{"the worktree itself is .", []string{"cd /w/t-abcde && make", "cd . && make"}, "cd . && make"},
		{"-- is not a flag", []string{"rm -rf -- -x"}, "rm -rf -- -x"},
		{"an unterminated quote runs to the end", []string{`echo "a b`}, "echo a b"},
		{"a trailing backslash stays", []string{`echo a\`}, `echo a\`},
		{"empty", []string{"", "   "}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, in := range tt.in {
				if got := CanonicalCommand(in, root); got != tt.want {
					t.Errorf("CanonicalCommand(%q) = %q, want %q", in, got, tt.want)
				}
			}
		})
	}
}

// Flags are moved only where that is safe: a flag followed by a word that
// is not a flag may be taking it as its value, so two orders of the same
// flags around a positional argument stay different.
func TestCanonicalCommandKeepsUnsafeOrders(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{
		{"grep -n -r foo .", "grep -r -n foo ."},
		{"go test -v -run TestX ./...", "go test -run TestX -v ./..."},
		{"tar -c -f out.tar dir", "tar -f -c out.tar dir"},
	} {
		a, b := CanonicalCommand(pair[0], ""), CanonicalCommand(pair[1], "")
		if a == b {
			t.Errorf("%q and %q both canonicalize to %q", pair[0], pair[1], a)
		}
	}
}

// The worktree is replaced as a whole path, not as a string prefix of a
// sibling's.
func TestCanonicalCommandRootIsAPath(t *testing.T) {
	t.Parallel()
	const root = "/w/t-abcde"
	tests := []struct{ in, root, want string }{
		{"cat /w/t-abcde-2/x.go", root, "cat /w/t-abcde-2/x.go"},
		{"cat /w/t-abcde/x.go", root + "/", "cat x.go"},
		{"cd /w/t-abcde; ls", root, "cd . ; ls"},
		{`cat "/w/t-abcde/a b.go"`, root, "cat ./a b.go"},
		{"diff /w/t-abcde/a.go /w/t-abcde/b.go", root, "diff a.go b.go"},
		{"ls /w/t-abcdef /x/w/t-abcde/y", root, "ls /w/t-abcdef /x/w/t-abcde/y"},
	}
	for _, tt := range tests {
		if got := CanonicalCommand(tt.in, tt.root); got != tt.want {
			t.Errorf("CanonicalCommand(%q, %q) = %q, want %q", tt.in, tt.root, got, tt.want)
		}
	}
	if got := CanonicalCall("read_file", json.RawMessage(`{"path":"/w/t-abcde/x.go"}`), root+"/"); got != `read_file {"path":"x.go"}` {
		t.Errorf("CanonicalCall with a root ending in / = %s", got)
	}
}

func TestCanonicalCall(t *testing.T) {
	t.Parallel()
	const root = "/w/t-abcde"
	tests := []struct {
		name string
		tool string
		in   []string
		want string
	}{
		{"keys sort, space goes", "read_file", []string{`{"path":"a.go","limit":10}`, `{ "limit": 10, "path": "a.go" }`}, `read_file {"limit":10,"path":"a.go"}`},
		{"paths are relative to the root and clean", "read_file",
			[]string{`{"path":"/w/t-abcde/a/../b/c.go"}`, `{"path":"./b/c.go"}`, `{"path":"b/c.go"}`, `{"path":"b//c.go"}`, `{"path":" ./b/./c.go "}`},
			`read_file {"path":"b/c.go"}`},
		{"./a/../b is b", "read_file", []string{`{"path":"./a/../b"}`}, `read_file {"path":"b"}`},
		{"the root itself is .", "list", []string{`{"path":"/w/t-abcde"}`, `{"path":"./"}`}, `list {"path":"."}`},
		{"a sibling of the root stays absolute", "read_file", []string{`{"path":"/w/t-abcdef/x"}`}, `read_file {"path":"/w/t-abcdef/x"}`},
		{"paths outside stay", "read_file", []string{`{"path":"/etc/hosts"}`}, `read_file {"path":"/etc/hosts"}`},
		{"paths above stay", "read_file", []string{`{"path":"../other/x"}`}, `read_file {"path":"../other/x"}`},
		{"strings in arrays too", "t", []string{`{"b":1,"a":[" ./x/ ","y"]}`}, `t {"a":["x","y"],"b":1}`},
		{"text with spaces is kept but for its ends", "write_file", []string{`{"content":" a/b c\n","path":"x"}`, `{"content":"a/b c","path":"./x"}`}, `write_file {"content":"a/b c","path":"x"}`},
		{"the command is a command", "bash",
			[]string{`{"command":"ls   -l  /w/t-abcde/x"}`, `{"command":"ls -l ./x"}`, `{"command":" ls '-l' x "}`},
			`bash {"command":"ls -l x"}`},
		{"not JSON is kept, collapsed", "t", []string{"not  json", "not json\n"}, "t not json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, in := range tt.in {
				if got := CanonicalCall(tt.tool, json.RawMessage(in), root); got != tt.want {
					t.Errorf("CanonicalCall(%s, %s) = %s, want %s", tt.tool, in, got, tt.want)
				}
			}
		})
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []string // all mask to want
		want string
	}{
		{"line numbers", []string{"pay.go:41:2: undefined: ledger", "pay.go:143:17: undefined: ledger"}, "pay.go:#:#: undefined: ledger"},
		{"durations and decimals", []string{"ok pkg 0.214s", "ok pkg 12.5s"}, "ok pkg #s"},
		{"addresses", []string{"Post(0xc000123456)", "Post(0xc0001a2b3c)"}, "Post(<hex>)"},
		{"short hex numbers are numbers", []string{"code=0x1", "code=0x7"}, "code=#x#"},
		{"hex ids", []string{"commit 9fceb02d0ae598e95dc970b74767f19372d61af8", "commit 1a2b3c4d5e6f"}, "commit <hex>"},
		{"short hex words stay", []string{"dead cafe beef"}, "dead cafe beef"},
		{"UUIDs", []string{"run 123e4567-e89b-12d3-a456-426614174000 done", "run 00000000-0000-0000-0000-000000000000 done"}, "run <id> done"},
		{"RFC 3339 times", []string{"at 2026-11-21T09:03:12.123Z", "at 2025-01-02T23:59:59+02:00", "at 2026-11-21 09:03"}, "at <time>"},
		{"clock times", []string{"[09:03:12] started", "[9:03:12.5] started"}, "[<time>] started"},
		{"temporary paths", []string{"open /tmp/go-build123456/b001/x.test: denied", "open /var/folders/ab/cd/T/go-build9/x: denied", "open /private/var/tmp/x: denied"}, "open <tmp>: denied"},
		{"whitespace", []string{"  a \n\t b  "}, "a b"},
		{"empty", []string{""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, in := range tt.in {
				if got := Mask(in); got != tt.want {
					t.Errorf("Mask(%q) = %q, want %q", in, got, tt.want)
				}
			}
		})
	}
}

// Masking keeps different errors different: only volatile parts go.
func TestMaskKeepsDistinctErrorsDistinct(t *testing.T) {
	t.Parallel()
	distinct := [][2]string{
		{"pay.go:41:2: undefined: ledger", "pay.go:41:2: undefined: Ledger"},
		{"pay.go:41:2: undefined: ledger", "pay.go:41:2: cannot use x (variable of type int) as string value"},
		{"--- FAIL: TestCharge", "--- FAIL: TestRefund"},
		{"open config/dev.yaml: no such file or directory", "open config/prod.yaml: no such file or directory"},
		{"exit status 1", "signal: killed"},
	}
	for _, p := range distinct {
		a, b := Mask(p[0]), Mask(p[1])
		if a == b || Similar(a, b, 0.9) {
			t.Errorf("%q and %q mask alike: %q, %q", p[0], p[1], a, b)
		}
	}
}

// A project's own tmp directory is not a temporary path.
func TestMaskProjectTmpDir(t *testing.T) {
	t.Parallel()
	a, b := Mask("open /w/t-abcde/tmp/a.json: no such file"), Mask("open /w/t-abcde/tmp/b.json: no such file")
	if a == b {
		t.Errorf("files in a project's tmp/ mask alike: %q", a)
	}
	if got := Mask("open '/tmp/x1/a.json' at=/tmp/y2 /tmp/z"); got != "open '<tmp>' at=<tmp> <tmp>" {
		t.Errorf("temporary paths after a quote, = or space: %q", got)
	}
}

func TestSimilar(t *testing.T) {
	t.Parallel()
	long := "a b c d e f g h i j k l m n o p q r s t"
	tests := []struct {
		name      string
		a, b      string
		threshold float64
		want      bool
	}{
		{"equal", "x y", "x y", 0.9, true},
		{"equal at threshold 1", "x y", "x y", 1, true},
		{"different at threshold 1", long, long + " u", 1, false},
		{"empty and not", "", "x", 0.9, false},
		{"both empty", "", "", 0.9, true},
		{"one word of twenty-one more", long, long + " u", 0.9, true},
		{"one word of twenty changed", long, strings.Replace(long, "t", "z", 1), 0.9, true},
		{"two words of twenty changed", long, strings.NewReplacer("t", "z", "s", "y").Replace(long), 0.9, false},
		{"word order does not matter", "a b c", "c b a", 0.9, true},
		{"lengths too far apart", "a b", "a b a b a b", 0.9, false},
		{"duplicates count once", "a a b", "a b b", 0.9, true},
		{"low threshold", "a b c d", "a b c e", 0.5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Similar(tt.a, tt.b, tt.threshold); got != tt.want {
				t.Errorf("Similar(%q, %q, %v) = %v, want %v", tt.a, tt.b, tt.threshold, got, tt.want)
			}
			if got := Similar(tt.b, tt.a, tt.threshold); got != tt.want {
				t.Errorf("Similar(%q, %q, %v) = %v, want %v (not symmetric)", tt.b, tt.a, tt.threshold, got, tt.want)
			}
		})
	}
}

func FuzzMask(f *testing.F) {
	for _, s := range []string{
		"pay.go:41:2: undefined: ledger", "Post(0xc000123456) at 2026-11-21T09:03:12.123Z",
		"open /tmp/go-build123/b001/x.test: denied", "run 123e4567-e89b-12d3-a456-426614174000", "ok pkg 0.214s",
		"\xff\xfe 0x", "…tail", "a\u00a0b\u2003c", "/tmp/", "0x", "1.2.3.4", "deadbeef1 a1b2c3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := Mask(s)
		if again := Mask(m); again != m {
			t.Errorf("Mask is not idempotent on %q: %q then %q", s, m, again)
		}
		if strings.ContainsAny(m, "0123456789") {
			t.Errorf("Mask(%q) = %q keeps a digit", s, m)
		}
		if m != strings.Join(strings.Fields(m), " ") {
			t.Errorf("Mask(%q) = %q is not collapsed", s, m)
		}
		if utf8.ValidString(s) && !utf8.ValidString(m) {
			t.Errorf("Mask(%q) = %q is not valid UTF-8", s, m)
		}
		if !Similar(m, m, 0.9) {
			t.Errorf("Similar(%q, itself) = false", m)
		}
	})
}

func FuzzCanonicalCommand(f *testing.F) {
	for _, s := range []string{
		"go test -race -count=1 ./...", `go test "-run" 'TestX' ./x && echo ok | tee /w/t/log`, `a\ b "c d" 'e`,
		"a||b;c&d", "-x", "--", "\\", "\xff\"", "/w/t/../../x", "ls -la -h",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := CanonicalCommand(s, "/w/t")
		if again := CanonicalCommand(s, "/w/t"); again != got {
			t.Fatalf("CanonicalCommand(%q) is not deterministic: %q, %q", s, got, again)
		}
		// Whitespace between words does not matter when nothing is quoted:
		// a shell's white space (a no-break space is part of a word).
		if !strings.ContainsAny(s, `'"\`) {
			spaced := strings.Join(strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" \t\n\r\v\f", r) }), "  \t")
			if other := CanonicalCommand(spaced, "/w/t"); other != got {
				t.Errorf("CanonicalCommand(%q) = %q but CanonicalCommand(%q) = %q", s, got, spaced, other)
			}
		}
		call := CanonicalCall("bash", mustJSON(t, map[string]string{"command": s}), "/w/t")
		if !strings.HasPrefix(call, "bash {") {
			t.Errorf("CanonicalCall(bash, %q) = %q", s, call)
		}
	})
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
