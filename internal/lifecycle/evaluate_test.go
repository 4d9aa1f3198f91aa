package lifecycle

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/anthropic"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// routerClient is a real Anthropic client talking to a scripted model
// server that answers every request with step.
func routerClient(t *testing.T, step llmtest.Step) (llm.Client, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(t, &llmtest.Script{Default: &llmtest.Conversation{Steps: []llmtest.Step{step}}})
	c, err := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test", Model: "claude-haiku-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

var evalTask = task.Task{ID: "t-aaaaa", Description: "make the flaky login test pass", Persona: "senior"}

func TestEvaluateWithTheModel(t *testing.T) {
	t.Parallel()
	reply := "Here it is:\n```json\n" + `{"complexity": "low", "tools": ["Read", "Edit", "Bash", "Task"], "commands": ["go test"], "writable": ["internal/auth", "/etc"], "secrets": ["CI_TOKEN"]}` + "\n```"
	client, srv := routerClient(t, llmtest.Step{Text: reply})
	p := testPolicy()
	ev := Evaluator{Policy: p, Client: client, Model: "claude-haiku-4-5"}.Evaluate(context.Background(), evalTask, []string{"PORT=1"})
	want := task.Manifest{Readable: []string{"."}, Writable: []string{"internal/auth"}, Tools: []string{"Read", "Edit", "Bash"},
		Commands: []string{"go test"}, Env: []string{"PORT"}, Secrets: []string{"CI_TOKEN"}, Complexity: task.Low,
		IdleTimeoutSecs: 450, TotalTimeoutSecs: 3600, Source: "model", Note: `dropped beyond the policy: tool "Task", writable "/etc"`}
	if diff := cmp.Diff(want, ev.Manifest); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
	if ev.Call == nil || ev.Call.Usage.OutputTokens == 0 {
		t.Errorf("call = %+v, want the pass's usage to charge", ev.Call)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	q := reqs[0].Messages[0].Text()
	for _, s := range []string{"make the flaky login test pass", "Allowed tools: Read, Write, Edit, Glob, Grep, Bash", `"complexity":"medium"`} {
		if !strings.Contains(q, s) {
			t.Errorf("question lacks %q:\n%s", s, q)
		}
	}
}

func TestEvaluateKeepsTheDefaultOnABadReply(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	def := Default(evalTask, p, nil)
	for _, tc := range []struct {
		name string
		step llmtest.Step
		note string
	}{
		{"prose", llmtest.Step{Text: "I think it is a medium task."}, "holds no JSON object"},
		{"unknown field", llmtest.Step{Text: `{"complexity": "low", "sudo": true}`}, `unknown field "sudo"`},
		{"wrong type", llmtest.Step{Text: `{"tools": "Bash"}`}, "cannot unmarshal"},
		{"bad complexity", llmtest.Step{Text: `{"complexity": "trivial"}`}, `complexity "trivial"`},
		{"truncated", llmtest.Step{Text: `{"complexity": "low", "tools": ["Read"`}, "holds no JSON object"},
		{"server error", llmtest.Step{Fault: &llmtest.Fault{Kind: "server_error", Always: true}}, "the model's pass failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client, _ := routerClient(t, tc.step)
			ev := Evaluator{Policy: p, Client: client, Model: "claude-haiku-4-5"}.Evaluate(context.Background(), evalTask, nil)
			got := ev.Manifest
			if !strings.Contains(got.Note, tc.note) {
				t.Errorf("note = %q, want it to say %q", got.Note, tc.note)
			}
			got.Note = ""
			if diff := cmp.Diff(def, got); diff != "" {
				t.Errorf("manifest is not the default (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvaluateWithoutAModel(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	ev := Evaluator{Policy: p}.Evaluate(context.Background(), evalTask, nil)
	if diff := cmp.Diff(Default(evalTask, p, nil), ev.Manifest); diff != "" || ev.Call != nil {
		t.Errorf("manifest (-want +got):\n%s; call %v", diff, ev.Call)
	}
}

func FuzzParseReply(f *testing.F) {
	f.Add(`{"complexity": "low", "tools": ["Read"], "writable": ["."]}`)
	f.Add("```json\n{\"commands\": [\"go test\", \"rm -rf /\"]}\n```")
	f.Add(`{"readable": ["/", "../x", "\u0000"], "secrets": ["A_KEY", "x y"]}`)
	f.Add(`}{`)
	p := testPolicy()
	def := Default(evalTask, p, nil)
	f.Fuzz(func(t *testing.T, reply string) {
		m, err := ParseReply(reply, def, p)
		if err != nil {
			if diff := cmp.Diff(def, m); diff != "" {
				t.Fatalf("an error returned other than the default:\n%s", diff)
			}
			return
		}
		// Whatever the model says, the result is within the policy.
		again, dropped := Clamp(m, p)
		if len(dropped) > 0 {
			t.Fatalf("ParseReply's manifest is not within the policy: %q", dropped)
		}
		if diff := cmp.Diff(m, again); diff != "" {
			t.Fatalf("Clamp changed ParseReply's manifest:\n%s", diff)
		}
		if !m.Complexity.Valid() {
			t.Fatalf("complexity %q", m.Complexity)
		}
	})
}
