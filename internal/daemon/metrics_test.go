package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// exposition is a scrape of GET /metrics: series (name with its labels as
// written) to value.
type exposition map[string]float64

func (d *modelDaemon) scrape(t testing.TB) exposition {
	t.Helper()
	b, err := d.client.Metrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := exposition{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("bad metrics line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// sum adds the series of metric name whose labels contain every one of
// labels (`k="v"`).
func (e exposition) sum(name string, labels ...string) float64 {
	var total float64
next:
	for series, v := range e {
		if series != name && !strings.HasPrefix(series, name+"{") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(series, l) {
				continue next
			}
		}
		total += v
	}
	return total
}

// settled scrapes until the counters have handled every logged event.
func (d *modelDaemon) settled(t testing.TB) exposition {
	t.Helper()
	var e exposition
	testkit.WaitFor(t, "the metrics counters to catch up with the event log", func() bool {
		e = d.scrape(t)
		return e["neuraphage_metrics_last_counted_id"] >= e["neuraphage_event_log_last_id"]
	})
	return e
}

// TestMetricsFollowARealTask: a task run over the scripted model server
// moves the socket's /metrics: tasks by status, model calls and tokens
// (what the model server was asked and answered), the user's message
// queued and delivered.
func TestMetricsFollowARealTask(t *testing.T) {
	t.Parallel()
	script := `
conversations:
  - name: metered
    match: {user: "count the parser's rules"}
    steps:
      - tool_calls: [{name: ask_user, input: {question: "Which parser?"}}]
        usage: {input_tokens: 1200, output_tokens: 34}
      - tool_calls: [{name: complete_task, input: {summary: "counted"}}]
        usage: {input_tokens: 900, output_tokens: 21}
`
	d := startModel(t, script, "", nil)
	before := d.settled(t)
	if n := before.sum("neuraphage_model_calls_total"); n != 0 {
		t.Fatalf("model_calls_total = %v before any task", n)
	}

	tk := d.create(t, api.CreateTaskRequest{Description: "count the parser's rules", Persona: "mid"})
	d.waitStatus(t, tk.ID, task.Waiting)
	mid := d.settled(t)
	if got := mid.sum("neuraphage_tasks", `status="waiting"`); got != 1 {
		t.Errorf(`tasks{status="waiting"} = %v, want 1`, got)
	}
	if got, want := mid.sum("neuraphage_model_calls_total"), float64(len(d.model.Requests())); got != want || got != 1 {
		t.Errorf("model_calls_total = %v, want the model server's %v requests (1)", got, want)
	}
	if got := mid.sum("neuraphage_model_tokens_total", `direction="input"`); got != 1200 {
		t.Errorf("input tokens = %v, want 1200", got)
	}

	if _, err := d.client.Send(context.Background(), string(tk.ID), "the one in parser.go"); err != nil {
		t.Fatal(err)
	}
	d.waitStatus(t, tk.ID, task.Completed)
	after := d.settled(t)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"neuraphage_tasks", []string{`status="completed"`}, 1},
		{"neuraphage_tasks", []string{`status="waiting"`}, 0},
		{"neuraphage_model_calls_total", nil, 2},
		{"neuraphage_model_tokens_total", []string{`direction="input"`}, 2100},
		{"neuraphage_model_tokens_total", []string{`direction="output"`}, 55},
		{"neuraphage_injections_queued_total", []string{`kind="message"`}, 1},
		{"neuraphage_injections_delivered_total", []string{`kind="message"`}, 1},
		{"neuraphage_injections_pending", nil, 0},
		{"neuraphage_merge_queue_depth", nil, 0},
	} {
		if got := after.sum(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got, want := after.sum("neuraphage_model_calls_total"), float64(len(d.model.Requests())); got != want {
		t.Errorf("model_calls_total = %v, the model server saw %v requests", got, want)
	}
	if after.sum("neuraphage_model_cost_usd_total") <= mid.sum("neuraphage_model_cost_usd_total") {
		t.Errorf("cost did not rise with the second call: %v then %v", mid.sum("neuraphage_model_cost_usd_total"), after.sum("neuraphage_model_cost_usd_total"))
	}
	if after["neuraphage_bus_subscribers"] < 1 {
		t.Errorf("bus_subscribers = %v, want the daemon's own", after["neuraphage_bus_subscribers"])
	}
}
