package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestLog(t *testing.T) {
	t.Parallel()
	c, st := newControl(t, counting(200))
	ctx := context.Background()
	a, err := c.Create(ctx, task.Spec{Description: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Create(ctx, task.Spec{Description: "b"})
	if err != nil {
		t.Fatal(err)
	}
	entries := []store.Entry{
		{Turn: 0, At: t0, Message: llm.UserText("add token expiry checks")},
		{Turn: 1, At: t0.Add(time.Second), Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
			llm.TextPart("Looking."),
			llm.ToolCallPart(llm.ToolCall{ID: "c1", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)}),
		}}},
		{Turn: 1, At: t0.Add(2 * time.Second), Message: llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
			llm.ToolResultPart(llm.ToolResult{CallID: "c1", Content: "no such file", IsError: true}),
		}}},
	}
	if _, _, err := st.Checkpoint(ctx, store.Checkpoint{TaskID: a.ID, Entries: entries}); err != nil {
		t.Fatal(err)
	}

	id, got, err := c.Log(ctx, string(a.ID)[2:4], 1)
	if err != nil {
		t.Fatal(err)
	}
	want := entries[1:]
	for i := range want {
		want[i].Seq = i + 1
	}
	if id != a.ID {
		t.Errorf("id = %s, want %s", id, a.ID)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries from 1 (-want +got):\n%s", diff)
	}

	if id, got, err := c.Log(ctx, string(b.ID), 0); err != nil || id != b.ID || len(got) != 0 {
		t.Errorf("Log of a task without a conversation = %s, %v, %v; want no entries", id, got, err)
	}
	if _, _, err := c.Log(ctx, "t-zzzzz", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Log of an unknown task: %v, want ErrNotFound", err)
	}
	var inv *task.InvalidError
	if _, _, err := c.Log(ctx, string(a.ID), -1); !errors.As(err, &inv) || inv.Field != "from" {
		t.Errorf("Log from -1: %v, want *task.InvalidError on from", err)
	}
}

func TestCosts(t *testing.T) {
	t.Parallel()
	c, st := newControl(t, counting(200))
	ctx := context.Background()
	var ids []task.ID
	for _, d := range []string{"a", "b"} {
		tk, err := c.Create(ctx, task.Spec{Description: d})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
	}
	day := 24 * time.Hour
	charge := func(at time.Time, model string, in, out int64, usd float64) store.Charge {
		return store.Charge{At: at, Provider: "anthropic", Model: model, InputTokens: in, OutputTokens: out, CostUSD: usd}
	}
	for i, charges := range [][]store.Charge{
		{charge(t0.Add(-day), "claude-sonnet-4-5", 1000, 100, 0.5), charge(t0, "claude-haiku-4-5", 200, 20, 0.25)},
		{charge(t0, "claude-sonnet-4-5", 3000, 300, 1)},
	} {
		if _, _, err := st.Checkpoint(ctx, store.Checkpoint{TaskID: ids[i], Charges: charges}); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name  string
		ref   string
		by    string
		since time.Time
		want  []store.CostRow
	}{
		{name: "all by model", by: "model", want: []store.CostRow{
			{Key: "anthropic/claude-haiku-4-5", Calls: 1, InputTokens: 200, OutputTokens: 20, CostUSD: 0.25},
			{Key: "anthropic/claude-sonnet-4-5", Calls: 2, InputTokens: 4000, OutputTokens: 400, CostUSD: 1.5},
		}},
		{name: "one task by day", ref: string(ids[0])[2:5], by: "day", want: []store.CostRow{
			{Key: "2026-11-20", Calls: 1, InputTokens: 1000, OutputTokens: 100, CostUSD: 0.5},
			{Key: "2026-11-21", Calls: 1, InputTokens: 200, OutputTokens: 20, CostUSD: 0.25},
		}},
		{name: "total since today", since: t0, want: []store.CostRow{
			{Key: "total", Calls: 2, InputTokens: 3200, OutputTokens: 320, CostUSD: 1.25},
		}},
		{name: "by task", by: "task", want: []store.CostRow{
			{Key: string(ids[0]), Calls: 2, InputTokens: 1200, OutputTokens: 120, CostUSD: 0.75},
			{Key: string(ids[1]), Calls: 1, InputTokens: 3000, OutputTokens: 300, CostUSD: 1},
		}},
	}
	for _, tt := range tests {
		got, err := c.Costs(ctx, tt.ref, tt.by, tt.since)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		// LastID (the ledger's cursor, never on the wire) is the store's concern.
		if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(store.CostRow{}, "LastID")); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}

	var inv *task.InvalidError
	if _, err := c.Costs(ctx, "", "week", time.Time{}); !errors.As(err, &inv) || inv.Field != "by" {
		t.Errorf("Costs by week: %v, want *task.InvalidError on by", err)
	}
	if _, err := c.Costs(ctx, "t-zzzzz", "day", time.Time{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Costs of an unknown task: %v, want ErrNotFound", err)
	}
}
