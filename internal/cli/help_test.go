package cli

import (
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagUsageHasNoStrayValueNames walks every command's flags: pflag takes a
// back-quoted word in a flag's usage as the name of its value, so `task resume`
// in a bool flag's help printed as "--no-start task resume". Back quotes may
// only name a value, in capitals (FILE), on a flag that takes one.
func TestFlagUsageHasNoStrayValueNames(t *testing.T) {
	a := &app{env: Env{}}
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			n++
			name, _ := pflag.UnquoteUsage(f)
			if !strings.Contains(f.Usage, "`") {
				return
			}
			if f.Value.Type() == "bool" || strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsUpper(r) }) {
				t.Errorf("%s --%s: back quotes make %q its value name: %q", c.CommandPath(), f.Name, name, f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(a.newRootCmd())
	if n < 50 {
		t.Fatalf("walked only %d flags; the walk is broken", n)
	}
}

// TestTaskNewHelpReadsPlainly pins the two lines the issue found garbled.
func TestTaskNewHelpReadsPlainly(t *testing.T) {
	code, out, errOut := runCLI(t, t.TempDir(), "", "task", "new", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, bad := range []string{"--no-start task resume", "--persona neuraphage persona list", "--workflow neuraphage"} {
		if strings.Contains(out, bad) {
			t.Errorf("help shows %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{"--no-start ", "--persona string", "--context-file FILE"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}
