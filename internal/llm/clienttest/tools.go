package clienttest

import (
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

var readTool = llm.ToolDef{
	Name:        "read",
	Description: "Read a file.",
	Schema:      []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
}

func toolScript(calls ...llmtest.ToolCall) *llmtest.Script {
	return &llmtest.Script{Conversations: []llmtest.Conversation{{
		Name: "tools",
		Steps: []llmtest.Step{
			{Text: "Let me look.", ToolCalls: calls, ChunkSize: 4},
			{Text: "All done."},
		},
	}}}
}

// roundTrip streams the first step, checks its tool calls, answers them
// and checks what the server received in the second request.
func (s suite) roundTrip(t *testing.T, calls []llmtest.ToolCall, wantInputs []string) {
	srv, c := s.start(t, toolScript(calls...), 0)
	ctx := ctxFor(t)
	req := ask("read the files")
	req.Tools = []llm.ToolDef{readTool}
	var rec recorder
	resp, err := c.Stream(ctx, req, rec.handle)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	got := resp.Message.ToolCalls()
	if len(got) != len(calls) {
		t.Fatalf("got %d tool calls, want %d: %+v", len(got), len(calls), got)
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop = %q, want tool_use", resp.StopReason)
	}
	if resp.Message.Text() != "Let me look." || rec.text() != "Let me look." {
		t.Errorf("text = %q, streamed %q", resp.Message.Text(), rec.text())
	}
	// Tool-call events come last, complete, once each.
	if n := rec.count(llm.EventToolCall); n != len(calls) {
		t.Errorf("got %d tool-call events, want %d", n, len(calls))
	}
	for i, ev := range rec.events[len(rec.events)-len(calls):] {
		if ev.Kind != llm.EventToolCall || ev.ToolCall.ID != got[i].ID {
			t.Errorf("event %d from the end = %v, want tool call %s", len(calls)-i, ev.Kind, got[i].ID)
		}
	}
	for i, call := range got {
		if call.ID == "" || call.Name != calls[i].Name {
			t.Errorf("tool call %d = %+v, want name %q and an id", i, call, calls[i].Name)
		}
		jsonEqual(t, "tool call input", call.Input, wantInputs[i])
	}
	if len(srv.Requests()[0].Tools) != 1 || srv.Requests()[0].Tools[0].Name != "read" {
		t.Errorf("server saw tools %+v, want [read]", srv.Requests()[0].Tools)
	}

	results := llm.Message{Role: llm.RoleUser}
	for i, call := range got {
		results.Parts = append(results.Parts, llm.ToolResultPart(llm.ToolResult{CallID: call.ID, Content: "contents " + string(rune('A'+i))}))
	}
	req.Messages = append(req.Messages, resp.Message, results)
	resp2, err := c.Stream(ctx, req, nil)
	if err != nil {
		t.Fatalf("second Stream: %v", err)
	}
	if resp2.Message.Text() != "All done." || len(resp2.Message.ToolCalls()) != 0 {
		t.Errorf("second reply = %q with %d tool calls, want %q", resp2.Message.Text(), len(resp2.Message.ToolCalls()), "All done.")
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Step != 1 {
		t.Fatalf("server saw %d requests, second at step %d; want 2, step 1", len(reqs), reqs[len(reqs)-1].Step)
	}
	seen := reqs[1].Messages
	if len(seen) != 3 {
		t.Fatalf("second request has %d messages, want 3", len(seen))
	}
	echoed := seen[1].ToolCalls()
	if len(echoed) != len(got) {
		t.Fatalf("assistant turn echoed %d tool calls, want %d", len(echoed), len(got))
	}
	for i := range got {
		if echoed[i].ID != got[i].ID || echoed[i].Name != got[i].Name {
			t.Errorf("echoed call %d = %+v, want %+v", i, echoed[i], got[i])
		}
		jsonEqual(t, "echoed input", echoed[i].Input, wantInputs[i])
	}
	var res []llm.ToolResult
	for _, p := range seen[2].Parts {
		if p.ToolResult != nil {
			res = append(res, *p.ToolResult)
		}
	}
	if len(res) != len(got) {
		t.Fatalf("server saw %d tool results, want %d", len(res), len(got))
	}
	for i, r := range res {
		if r.CallID != got[i].ID || r.Content != "contents "+string(rune('A'+i)) {
			t.Errorf("tool result %d = %+v, want call %s", i, r, got[i].ID)
		}
	}
}

func (s suite) toolRoundTrip(t *testing.T) {
	s.roundTrip(t, []llmtest.ToolCall{{Name: "read", Input: map[string]any{"path": "internal/auth/jwt.go", "lines": []any{1, 20}}}},
		[]string{`{"path":"internal/auth/jwt.go","lines":[1,20]}`})
}

func (s suite) parallelToolCalls(t *testing.T) {
	s.roundTrip(t, []llmtest.ToolCall{
		{Name: "read", Input: map[string]any{"path": "a.go"}},
		{Name: "read", Input: map[string]any{"path": "b.go", "note": "quotes \" and \\ and ünïcödé"}},
		{Name: "read"},
	}, []string{`{"path":"a.go"}`, `{"path":"b.go","note":"quotes \" and \\ and ünïcödé"}`, `{}`})
}

func (s suite) completeToolCall(t *testing.T) {
	_, c := s.start(t, toolScript(llmtest.ToolCall{ID: "call_fixed", Name: "read", Input: map[string]any{"path": "x"}}), 0)
	resp, err := c.Complete(ctxFor(t), ask("read x"))
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	calls := resp.Message.ToolCalls()
	if len(calls) != 1 || calls[0].ID != "call_fixed" || calls[0].Name != "read" || resp.StopReason != llm.StopToolUse {
		t.Fatalf("Complete = calls %+v stop %q", calls, resp.StopReason)
	}
	jsonEqual(t, "input", calls[0].Input, `{"path":"x"}`)
}

func (s suite) usageAndCost(t *testing.T) {
	u := &llmtest.Usage{InputTokens: 1000, OutputTokens: 200, CacheWriteTokens: 300, CacheReadTokens: 4000}
	_, c := s.start(t, oneStep(llmtest.Step{Text: "priced", Usage: u}), 0)
	for _, stream := range []bool{true, false} {
		var resp *llm.Response
		var err error
		if stream {
			resp, err = c.Stream(ctxFor(t), ask("price me"), nil)
		} else {
			resp, err = c.Complete(ctxFor(t), ask("price me"))
		}
		if err != nil {
			t.Fatalf("stream=%t: %v", stream, err)
		}
		got := resp.Usage
		// Providers without a separate cache-write count (OpenAI) report
		// those tokens as input; the sum is the same.
		if got.OutputTokens != 200 || got.CacheReadTokens != 4000 || got.InputTokens+got.CacheWriteTokens != 1300 {
			t.Errorf("stream=%t: usage = %+v, want output 200, cache read 4000, input+cache write 1300", stream, got)
		}
		m := llm.ModelConfig{InputPerMTok: 3, OutputPerMTok: 15, CacheWritePerMTok: 3, CacheReadPerMTok: 0.3}
		const want = (1300*3 + 200*15 + 4000*0.3) / 1e6
		if cost := m.Cost(got); cost < want*0.999 || cost > want*1.001 {
			t.Errorf("stream=%t: cost = %v, want %v", stream, cost, want)
		}
	}
}

func (s suite) conversationsByMatch(t *testing.T) {
	script := &llmtest.Script{
		Conversations: []llmtest.Conversation{
			{Name: "auth", Match: llmtest.Match{User: `(?i)token expiry`}, Steps: []llmtest.Step{{Text: "auth reply"}}},
			{Name: "ui", Match: llmtest.Match{User: `login form`}, Steps: []llmtest.Step{{Text: "ui reply"}}},
		},
		Default: &llmtest.Conversation{Steps: []llmtest.Step{{Text: "default reply"}}},
	}
	_, c := s.start(t, script, 0)
	for in, want := range map[string]string{
		"add Token Expiry checks":   "auth reply",
		"build the login form":      "ui reply",
		"something else altogether": "default reply",
	} {
		resp, err := c.Stream(ctxFor(t), ask(in), nil)
		if err != nil {
			t.Fatalf("Stream(%q): %v", in, err)
		}
		if got := resp.Message.Text(); got != want {
			t.Errorf("Stream(%q) = %q, want %q", in, got, want)
		}
	}
}
