package stuck

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// Healthy traps: work whose calls differ only in numbers, paths or ranges,
// whose results move, or which is slow or retried. A call's identity keeps
// its numbers; none of these may be flagged (Tier2Only signals aside).
func healthyTraps() []healthyCase {
	return []healthyCase{
		{name: "numbered steps: echo step-N && sleep 1", build: func(s *stream) {
			s.prelude()
			for i := 1; i <= 150; i++ { // 5 minutes of steps
				s.turn("", bash(fmt.Sprintf("echo step-%d && sleep 1", i), fmt.Sprintf("step-%d", i)))
			}
			s.turn("Done.", write("steps.log", "150 steps"))
		}},
		{name: "paging through a file with sed -n A,Bp", build: func(s *stream) {
			s.prelude()
			for i := range 12 {
				s.turn("", bash(fmt.Sprintf("sed -n '%d,%dp' internal/pay/ledger.go", 1+40*i, 40+40*i), sourceFile(i)))
			}
			s.turn("Now the fix.", edit("internal/pay/ledger.go", "return nil", "return ErrLimit"))
		}},
		{name: "paging with a same-looking result", build: func(s *stream) {
			s.prelude()
			for i := range 10 {
				s.turn("", bash(fmt.Sprintf("sed -n '%d,%dp' data/rows.csv", 1+100*i, 100+100*i), "id,amount,currency\n"+strings.Repeat(fmt.Sprintf("%d,100,EUR\n", i), 3)))
			}
			s.turn("Now the fix.", edit("internal/pay/ledger.go", "return nil", "return ErrLimit"))
		}},
		{name: "polling a CI run whose counts change", build: func(s *stream) {
			s.prelude()
			for i := range 7 {
				out := fmt.Sprintf("run 4242: in_progress\njobs: %d of 9 completed, %d queued\n", i+1, 8-i)
				s.turn("Waiting for CI.", bash("sleep 30 && gh run view 4242 --json jobs", out))
			}
			s.turn("", bash("sleep 30 && gh run view 4242 --json jobs", "run 4242: completed success\njobs: 9 of 9 completed, 0 queued\n"))
			s.turn("CI is green.", write("NOTES.md", "ci green"))
		}},
		{name: "listing dir0 … dir8", build: func(s *stream) {
			s.prelude()
			for i := range 9 {
				s.turn("", bash(fmt.Sprintf("ls fixtures/dir%d", i), "a.json\nb.json\nc.json"))
			}
			s.turn("", write("fixtures/index.json", "[]"))
		}},
		{name: "touching file1.txt, file2.txt …", build: func(s *stream) {
			s.prelude()
			for i := 1; i <= 8; i++ {
				s.turn("", bash(fmt.Sprintf("touch out/file%d.txt", i), ""))
			}
		}},
		{name: "reading numbered files with identical content", build: func(s *stream) {
			s.prelude()
			for i := range 8 {
				s.turn("", read(fmt.Sprintf("testdata/case%d/golden.txt", i), "ok\n"))
			}
			s.turn("", write("testdata/README", "cases"))
		}},
		{name: "fix and test cycles, each fix moving the failure", build: func(s *stream) {
			s.prelude()
			for i := range 6 {
				s.turn("", edit("internal/pay/pay.go", fmt.Sprintf("v%d", i), fmt.Sprintf("v%d", i+1)))
				s.turn("", bash("go test ./internal/pay/", fmt.Sprintf("--- FAIL: TestCharge%d\n    pay_test.go:%d: %s\nFAIL", i, 20+i, failureText(i))).failed())
			}
			s.turn("", edit("internal/pay/pay.go", "v6", "v7"))
			s.turn("", bash("go test ./internal/pay/", "ok  \tgithub.com/acme/shop/internal/pay\t0.3s"))
		}},
		{name: "long reading before one large write", build: func(s *stream) {
			s.prelude()
			for i := range 45 {
				s.turn("", read(fmt.Sprintf("internal/mod/file%02d.go", i), sourceFile(i)))
			}
			s.turn("Writing the new package.", write("internal/mod/all.go", strings.Repeat("package mod\n", 200)))
		}},
		{name: "slow builds, each a few minutes", build: func(s *stream) {
			s.prelude()
			for i := range 5 {
				s.turn("", edit("internal/pay/pay.go", fmt.Sprintf("w%d", i), fmt.Sprintf("w%d", i+1)))
				s.turn("", bash("go build ./...", "").taking(4*time.Minute))
				s.tick()
			}
		}},
		{name: "work across packages while one unrelated test keeps failing", build: func(s *stream) {
			s.prelude()
			for i := range 8 {
				f := fmt.Sprintf("internal/%s/doc.go", []string{"pay", "ledger", "api", "store", "audit", "tax", "mail", "cli"}[i])
				s.turn("", edit(f, "// TODO", fmt.Sprintf("// done %d", i)))
				s.turn("", bash("go test ./...", "ok  \tgithub.com/acme/shop/internal/api\t0.2s\n--- FAIL: TestLegacyExport (0.01s)\n    export_test.go:12: golden file out of date\nFAIL\tgithub.com/acme/shop/internal/export\t0.03s\nFAIL").failed())
			}
		}},
		{name: "a formatter run that changes files", build: func(s *stream) {
			s.prelude()
			s.turn("", edit("internal/pay/pay.go", "return nil", "return ErrLimit"))
			s.turn("", edit("internal/pay/ledger.go", "// TODO", "func (l *Ledger) Limit() int64 { return l.limit }"))
			s.turn("Formatting.", shell("gofmt -l -w ./internal/pay", "internal/pay/ledger.go\ninternal/pay/pay.go",
				"internal/pay/pay.go", payGo+"// formatted\n", "internal/pay/ledger.go", "package pay\n\n// formatted ledger\n"))
			s.turn("", shell("gofmt -l -w ./internal/pay", "")) // nothing left to format: no change
			s.turn("", bash("go vet ./internal/pay/", ""))
			s.turn("", bash("go test ./internal/pay/", "ok  \tgithub.com/acme/shop/internal/pay\t0.3s"))
			s.turn("", shell("goimports -w ./internal/pay", "", "internal/pay/pay.go", payGo+"// formatted, imports sorted\n"))
			s.turn("", bash("go test ./internal/pay/", "ok  \tgithub.com/acme/shop/internal/pay\t0.3s"))
			s.turn("Done.", bash("git add -A && git commit -m 'pay: enforce the limit'", "[t-abcde 1a2b3c4] pay: enforce the limit\n 2 files changed"))
		}},
		{name: "a refactor that takes a file back to an earlier state once, then moves on", build: func(s *stream) {
			s.prelude()
			s.turn("", bash("go test ./internal/pay/", "ok  \tgithub.com/acme/shop/internal/pay\t0.3s"))
			s.turn("Moving Charge into its own file.", write("internal/pay/charge.go", "package pay\n\nfunc Charge() {}\n"))
			s.turn("", edit("internal/pay/pay.go", "func Charge() {}", ""))
			s.turn("", bash("go test ./internal/pay/", "# github.com/acme/shop/internal/pay\ncharge.go:3:6: Charge redeclared").failed())
			s.turn("That split does not work yet; putting it back.", edit("internal/pay/pay.go", "", "func Charge() {}"))
			s.turn("", remove("internal/pay/charge.go"))
			s.turn("", bash("go test ./internal/pay/", "ok  \tgithub.com/acme/shop/internal/pay\t0.3s"))
			s.turn("Now the split, with the declaration moved.", edit("internal/pay/pay.go", "func Charge() {}", "// Charge is in charge.go."))
			s.turn("", write("internal/pay/charge.go", "package pay\n\n// Charge moves money.\nfunc Charge() {}\n"))
			s.turn("", bash("go test ./internal/pay/", "ok  \tgithub.com/acme/shop/internal/pay\t0.4s"))
			s.turn("", edit("internal/pay/charge.go", "// Charge moves money.", "// Charge moves money from one account to another."))
			s.turn("", bash("go test ./internal/pay/", "ok  \tgithub.com/acme/shop/internal/pay\t0.4s"))
		}},
		{name: "a retry that succeeds", build: func(s *stream) {
			s.prelude()
			for range 2 {
				s.turn("", bash("go mod download", "go: github.com/acme/ledger@v1.2.0: Get \"https://proxy.golang.org/...\": dial tcp: i/o timeout").failed())
			}
			s.turn("", bash("go mod download", ""))
			s.turn("", bash("go build ./...", ""))
			s.turn("", edit("go.sum", "a", "b"))
		}},
	}
}

func TestHealthyTraps(t *testing.T) {
	t.Parallel()
	for _, c := range healthyTraps() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newStream("t-trap")
			c.build(s)
			hs := run(s, Config{}, true)
			if bad := actionable(hs); len(bad) > 0 {
				t.Errorf("a healthy task was flagged:%s", describe(t, s.items, bad))
			}
		})
	}
	_ = event.KindToolResult
}
