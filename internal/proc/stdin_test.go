package proc_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/proc/proctest"
)

func TestRunStdin(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("0123456789abcdef"), 300<<10/16) // 300 KiB: more than a pipe holds
	tests := []struct {
		name  string
		stdin []byte
		shell string
		out   string
	}{
		{"cat echoes stdin", []byte("hello\nworld"), "cat", "hello\nworld"},
		{"read by a shell builtin", []byte("first line\nsecond\n"), `read -r l; echo "got [$l]"`, "got [first line]\n"},
		{"empty but not nil", []byte{}, "cat; echo end", "end\n"},
		{"nil is /dev/null", nil, "cat; echo end", "end\n"},
		{"larger than a pipe buffer", big, "cat", string(big)},
		{"not read at all", big, "echo ignored", "ignored\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The timeout bounds a hang (a child waiting for input that never
			// ends); it is not a timing assertion.
			res, err := proc.Run(context.Background(), proc.Cmd{Shell: tt.shell, Stdin: tt.stdin, Timeout: safety})
			if err != nil {
				t.Fatal(err)
			}
			if res.TimedOut || res.Cancelled {
				t.Fatalf("TimedOut=%v Cancelled=%v, want neither", res.TimedOut, res.Cancelled)
			}
			if res.ExitCode != 0 {
				t.Errorf("exit code %d, want 0", res.ExitCode)
			}
			if res.Output != tt.out {
				t.Errorf("output (%d bytes) = %q, want (%d bytes) %q", len(res.Output), clipForLog(res.Output), len(tt.out), clipForLog(tt.out))
			}
		})
	}
}

// A nil Stdin is /dev/null itself, not an inherited terminal or pipe.
func TestRunNilStdinIsDevNull(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/fd/0"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	res, err := proc.Run(context.Background(), proc.Cmd{Args: []string{"readlink", "/proc/self/fd/0"}, Timeout: safety})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Output != "/dev/null\n" {
		t.Errorf("got exit %d output %q, want stdin to be /dev/null", res.ExitCode, res.Output)
	}
}

func TestRunSeparateStderr(t *testing.T) {
	t.Parallel()
	script := "echo out1; echo err1 >&2; echo out2; echo err2 >&2; exit 4"
	tests := []struct {
		name     string
		separate bool
		out      string
		stderr   string
	}{
		{"separate", true, "out1\nout2\n", "err1\nerr2\n"},
		{"merged", false, "out1\nerr1\nout2\nerr2\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := proc.Run(context.Background(), proc.Cmd{Shell: script, SeparateStderr: tt.separate, Timeout: safety})
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != tt.out || res.Stderr != tt.stderr || res.ExitCode != 4 {
				t.Errorf("got output %q stderr %q exit %d, want %q %q 4", res.Output, res.Stderr, res.ExitCode, tt.out, tt.stderr)
			}
		})
	}
}

// interleaved writes lines of 999 'o' to stdout and of 999 'e' to stderr,
// alternately, n of each: a child that blocks on one full pipe while the
// other is not read would deadlock.
func interleaved(n int) string {
	return `o=$(head -c 999 /dev/zero | tr '\0' o); e=$(head -c 999 /dev/zero | tr '\0' e); i=0
while [ $i -lt ` + strconv.Itoa(n) + ` ]; do printf '%s\n' "$o"; printf '%s\n' "$e" >&2; i=$((i+1)); done`
}

func TestRunSeparateStderrLargeStreams(t *testing.T) {
	t.Parallel()
	const lines = 200 // 200,000 bytes on each stream
	oLine := strings.Repeat("o", 999) + "\n"
	eLine := strings.Repeat("e", 999) + "\n"
	capped := func(c string) string {
		// MaxOutput 1000: the first 500 bytes, a marker, the last 500.
		return strings.Repeat(c, 500) + "\n[... 199000 bytes of output dropped ...]\n" + strings.Repeat(c, 499) + "\n"
	}
	tests := []struct {
		name      string
		maxOutput int
		out       string
		stderr    string
	}{
		{"whole", 0, strings.Repeat(oLine, lines), strings.Repeat(eLine, lines)},
		{"capped", 1000, capped("o"), capped("e")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := proc.Run(context.Background(), proc.Cmd{
				Shell:          interleaved(lines),
				SeparateStderr: true,
				MaxOutput:      tt.maxOutput,
				Timeout:        safety, // a deadlock shows as a timeout
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.TimedOut || res.ExitCode != 0 {
				t.Fatalf("TimedOut=%v exit %d, want a plain success", res.TimedOut, res.ExitCode)
			}
			if res.Output != tt.out {
				t.Errorf("output (%d bytes) = %q, want (%d bytes) %q", len(res.Output), clipForLog(res.Output), len(tt.out), clipForLog(tt.out))
			}
			if res.Stderr != tt.stderr {
				t.Errorf("stderr (%d bytes) = %q, want (%d bytes) %q", len(res.Stderr), clipForLog(res.Stderr), len(tt.stderr), clipForLog(tt.stderr))
			}
		})
	}
}

// Without SeparateStderr both large streams land in Output, each line whole
// (the lines are shorter than PIPE_BUF, so writes do not tear).
func TestRunMergedLargeStreams(t *testing.T) {
	t.Parallel()
	const lines = 200
	res, err := proc.Run(context.Background(), proc.Cmd{Shell: interleaved(lines), Timeout: safety})
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut || res.ExitCode != 0 {
		t.Fatalf("TimedOut=%v exit %d, want a plain success", res.TimedOut, res.ExitCode)
	}
	if res.Stderr != "" {
		t.Errorf("Stderr = %q, want empty without SeparateStderr", clipForLog(res.Stderr))
	}
	if len(res.Output) != 2*lines*1000 {
		t.Fatalf("output is %d bytes, want %d", len(res.Output), 2*lines*1000)
	}
	oLine, eLine := strings.Repeat("o", 999), strings.Repeat("e", 999)
	var nO, nE int
	for i, l := range strings.Split(strings.TrimSuffix(res.Output, "\n"), "\n") {
		switch l {
		case oLine:
			nO++
		case eLine:
			nE++
		default:
			t.Fatalf("line %d is torn: %q", i, clipForLog(l))
		}
	}
	if nO != lines || nE != lines {
		t.Errorf("got %d stdout and %d stderr lines, want %d of each", nO, nE, lines)
	}
}

// A background job that keeps the command's stdin open must not keep Run
// waiting once the command itself has exited: per the package doc, the rest
// of the group is killed when the command ends.
func TestRunReturnsWhenABackgroundJobHoldsStdin(t *testing.T) {
	proctest.Subreaper(t)
	res, err := proc.Run(context.Background(), proc.Cmd{
		Shell:   `exec 3<&0; sleep 1000 <&3 & echo $$ $!`,
		Stdin:   bytes.Repeat([]byte("x"), 1<<20),
		Timeout: 10 * time.Second, // bounds the hang
		Grace:   200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut || res.ExitCode != 0 {
		t.Errorf("TimedOut=%v exit %d after %v, want a plain success: the shell exited at once", res.TimedOut, res.ExitCode, res.Duration)
	}
	pgid, child := pids(t, res.Output)
	proctest.GroupGone(t, pgid, []int{child}, safety)
}

// clipForLog keeps failure messages about large outputs readable.
func clipForLog(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:100] + "…" + s[len(s)-100:]
}
