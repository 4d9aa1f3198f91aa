package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

func TestCostQueryFlags(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.Local)
	tests := []struct {
		name string
		opts costOpts
		want api.CostQuery
		hint string // of the usage error expected
	}{
		{name: "defaults", opts: costOpts{by: "day"}, want: api.CostQuery{By: "day"}},
		{name: "one task by model since a week", opts: costOpts{task: "4k", by: "model", since: "7d"},
			want: api.CostQuery{Task: "4k", By: "model", Since: now.AddDate(0, 0, -7)}},
		{name: "by task since a date", opts: costOpts{by: "task", since: "2026-11-01"},
			want: api.CostQuery{By: "task", Since: time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local)}},
		{name: "unknown grouping", opts: costOpts{by: "week"}, hint: "use --by day, --by task, --by model or --by watcher"},
		{name: "no grouping", opts: costOpts{by: ""}, hint: "use --by day, --by task, --by model or --by watcher"},
		{name: "bad since", opts: costOpts{by: "day", since: "last week"}, hint: "e.g. --since 10m, --since 7d, --since 2026-11-21"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := costQuery(tt.opts, now)
			if tt.hint != "" {
				var ue *usageError
				if !errors.As(err, &ue) || ue.hint != tt.hint {
					t.Errorf("error %v; want a usage error with hint %q", err, tt.hint)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCostFlagErrorsExitTwo: bad flags are refused before any daemon is
// needed, with exit code 2 and a hint.
func TestCostFlagErrorsExitTwo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"cost", "--by", "week"},
		{"cost", "--since", "someday"},
		{"cost", "--since", "-2d"},
	} {
		code, out, errOut := runCLI(t, t.TempDir(), "", args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, "\nhint: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with a hint", args, code, out, errOut)
		}
	}
}

func TestWriteCostReport(t *testing.T) {
	t.Parallel()
	rep := api.CostReport{
		TaskID: "t-4k2x9", Since: time.Date(2026, 11, 14, 9, 0, 0, 0, time.UTC), By: "model",
		Rows: []api.CostRow{
			{Key: "anthropic/claude-sonnet-4-5", Calls: 1234, InputTokens: 12345678, OutputTokens: 91011, CacheReadTokens: 900, CacheWriteTokens: 100, CostUSD: 12.34567},
			{Key: "openai/gpt-5-mini", Calls: 2, InputTokens: 100, OutputTokens: 10, CostUSD: 0.00015},
		},
		Total: api.CostRow{Key: "total", Calls: 1236, InputTokens: 12345778, OutputTokens: 91021, CacheReadTokens: 900, CacheWriteTokens: 100, CostUSD: 12.34582},
	}
	var b bytes.Buffer
	writeCostReport(&b, rep, time.UTC)
	want := `cost of t-4k2x9 since 2026-11-14 09:00
MODEL                        CALLS       INPUT  OUTPUT  CACHE   COST $
anthropic/claude-sonnet-4-5  1,234  12,345,678  91,011  1,000  12.3457
openai/gpt-5-mini                2         100      10      0   0.0001
total                        1,236  12,345,778  91,021  1,000  12.3458
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}

	b.Reset()
	writeCostReport(&b, api.CostReport{By: "day", Total: api.CostRow{Key: "total"}}, time.UTC)
	if want := "cost of all tasks\nno model calls recorded\n"; b.String() != want {
		t.Errorf("empty report %q, want %q", b.String(), want)
	}
}

func TestThousands(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCostCommand(t *testing.T) {
	t.Parallel()
	queries := make(chan url.Values, 2)
	rep := api.CostReport{By: "task", Rows: []api.CostRow{{Key: "t-4k2x9", Calls: 3, InputTokens: 3000, OutputTokens: 300, CostUSD: 0.03}},
		Total: api.CostRow{Key: "total", Calls: 3, InputTokens: 3000, OutputTokens: 300, CostUSD: 0.03}}
	home := fakeDaemon(t, map[string]http.HandlerFunc{
		"GET /v1/cost": func(w http.ResponseWriter, r *http.Request) {
			queries <- r.URL.Query()
			writeAPI(w, rep)
		},
	})
	code, out, errOut := runCLI(t, home, "", "cost", "--by", "task", "--since", "2026-11-01T00:00:00Z")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := url.Values{"by": {"task"}, "since": {"2026-11-01T00:00:00Z"}}
	if diff := cmp.Diff(want, <-queries); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if !strings.Contains(out, "TASK     CALLS  INPUT  OUTPUT  CACHE  COST $\nt-4k2x9      3  3,000     300      0  0.0300\ntotal        3  3,000     300      0  0.0300\n") {
		t.Errorf("output:\n%s", out)
	}

	code, out, _ = runCLI(t, home, "", "cost", "--task", "4k", "--json")
	var got api.CostReport
	if err := json.Unmarshal([]byte(out), &got); code != ExitOK || err != nil {
		t.Fatalf("--json: exit %d, %v:\n%s", code, err, out)
	}
	if diff := cmp.Diff(rep, got); diff != "" {
		t.Errorf("--json (-want +got):\n%s", diff)
	}
	if q := <-queries; q.Get("task") != "4k" || q.Get("by") != "day" {
		t.Errorf("query %v; want task 4k by day", q)
	}
}
