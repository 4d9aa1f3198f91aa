package persona_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/anthropic"
	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
	"github.com/neuraphage/neuraphage-go/internal/persona"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

const goodReply = `{"category": "debugging", "complexity": "high", "suggested-persona": "senior", "tags": ["auth", "sessions"]}`

func TestParseRoute(t *testing.T) {
	t.Parallel()
	good := persona.Route{Category: "debugging", Complexity: "high", Suggested: "senior", Tags: []string{"auth", "sessions"}}
	tests := []struct {
		name    string
		reply   string
		want    persona.Route
		wantErr string // part of the error; empty means success
	}{
		{name: "plain JSON", reply: goodReply, want: good},
		{name: "surrounding whitespace", reply: "\n\n  " + goodReply + "  \n", want: good},
		{name: "json code fence", reply: "```json\n" + goodReply + "\n```", want: good},
		{name: "bare code fence", reply: "```\n" + goodReply + "\n```\n", want: good},
		{name: "fence on one line", reply: "```json" + goodReply + "```", want: good},
		{name: "fence without close", reply: "```json\n" + goodReply + "\n", wantErr: "opens a code fence and never closes it"},
		{name: "prose before JSON", reply: "Sure! Here is the classification: " + goodReply, wantErr: "the reply is not a JSON object"},
		{name: "trailing text after the object", reply: goodReply + "\nHope this helps.", wantErr: "has more after its JSON object"},
		{name: "second object", reply: goodReply + goodReply, wantErr: "has more after its JSON object"},
		{name: "array", reply: `["senior"]`, wantErr: "the reply is not a JSON object"},
		{name: "string", reply: `"senior"`, wantErr: "the reply is not a JSON object"},
		{name: "empty", reply: "   ", wantErr: "the reply is not a JSON object"},
		{name: "broken JSON", reply: `{"category": }`, wantErr: "the reply is not valid JSON"},
		{name: "unclosed object", reply: `{"category": "debugging"`, wantErr: "the reply is not valid JSON"},
		{name: "category not a string", reply: `{"category": 5}`, wantErr: "category is not a string"},
		{name: "suggested not a string", reply: `{"category": "x", "suggested-persona": ["senior"]}`, wantErr: "suggested-persona is not a string"},
		{name: "complexity not a string", reply: `{"category": "x", "complexity": 3}`, wantErr: "complexity is not a string"},
		{name: "tags not a list", reply: `{"category": "x", "tags": "auth"}`, wantErr: "tags is not a list"},
		{name: "category with a space", reply: `{"category": "bug fixes"}`, wantErr: `category "bug fixes" is not a short name`},
		{name: "category too long", reply: `{"category": "` + strings.Repeat("c", 65) + `"}`, wantErr: "is not a short name"},
		{name: "complexity invalid", reply: `{"category": "x", "complexity": "extreme"}`, wantErr: `complexity "extreme" is not low, medium or high`},
		{
			name:  "uppercase normalized",
			reply: `{"category": " Bug-Fixes ", "complexity": "HIGH", "suggested-persona": "Senior"}`,
			want:  persona.Route{Category: "bug-fixes", Complexity: "high", Suggested: "senior"},
		},
		{
			name:  "tags dedup, lower-case, invalid dropped",
			reply: `{"category": "x", "tags": ["Auth", "auth", " API ", "has space", "a,b", 7, null, "", "` + strings.Repeat("t", 65) + `", "db"]}`,
			want:  persona.Route{Category: "x", Tags: []string{"auth", "api", "db"}},
		},
		{
			name:  "tags capped at 8",
			reply: `{"category": "x", "tags": ["t1","t2","t3","t4","t5","t6","t7","t8","t9","t10"]}`,
			want:  persona.Route{Category: "x", Tags: []string{"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"}},
		},
		{name: "empty tags", reply: `{"category": "x", "tags": []}`, want: persona.Route{Category: "x"}},
		{name: "suggested_persona alias", reply: `{"suggested_persona": "junior"}`, want: persona.Route{Suggested: "junior"}},
		{name: "persona alias", reply: `{"category": "docs", "persona": "Junior"}`, want: persona.Route{Category: "docs", Suggested: "junior"}},
		{
			name:  "suggested-persona wins over aliases",
			reply: `{"persona": "junior", "suggested_persona": "mid", "suggested-persona": "senior"}`,
			want:  persona.Route{Suggested: "senior"},
		},
		{name: "empty suggestion falls to alias", reply: `{"suggested-persona": "", "persona": "mid"}`, want: persona.Route{Suggested: "mid"}},
		{name: "unknown fields ignored", reply: `{"category": "x", "reason": "because"}`, want: persona.Route{Category: "x"}},
		{name: "neither category nor persona", reply: `{"complexity": "low", "tags": ["auth"]}`, wantErr: "names neither a category nor a persona"},
		{name: "blank category and persona", reply: `{"category": " ", "persona": null}`, wantErr: "names neither a category nor a persona"},
		{
			name:    "oversize reply",
			reply:   `{"category": "x", "pad": "` + strings.Repeat("a", 16<<10) + `"}`,
			wantErr: "a classification is under 16384",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := persona.ParseRoute(tt.reply)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseRoute = %+v, %v; want error containing %q", got, err, tt.wantErr)
				}
				if diff := cmp.Diff(persona.Route{}, got); diff != "" {
					t.Errorf("route returned with the error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRoute: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseRoute (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseRoute(f *testing.F) {
	for _, s := range []string{
		goodReply,
		"```json\n" + goodReply + "\n```",
		"```\n{\"persona\": \"mid\"}\n```",
		`{"suggested_persona": "Junior", "tags": ["A", "a", "b c", 1, "d"]}`,
		`{"category": "x", "complexity": "Medium", "tags": ["İstanbul", "ǅ", "ﬃ", "\u00a0x"]}`,
		`{"category": "x", "tags": ["1","2","3","4","5","6","7","8","9"]}`,
		`{"category": "x"} trailing`,
		"```json\n{\"category\": 1}",
		`{"category": "\u0000"}`,
		`[]`,
		``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		r, err := persona.ParseRoute(reply)
		if err != nil {
			if diff := cmp.Diff(persona.Route{}, r); diff != "" {
				t.Fatalf("route returned with error %v: %+v", err, r)
			}
			return
		}
		if r.Category == "" && r.Suggested == "" {
			t.Fatalf("ParseRoute(%q) = %+v: neither category nor persona", reply, r)
		}
		if !slices.Contains([]string{"", "low", "medium", "high"}, r.Complexity) {
			t.Fatalf("ParseRoute(%q): complexity %q", reply, r.Complexity)
		}
		for _, w := range []string{r.Category, r.Suggested} {
			if len(w) > 64 || strings.ContainsAny(w, " \t\n,\"") || w != strings.ToLower(w) {
				t.Fatalf("ParseRoute(%q): %q is not a short lower-case name", reply, w)
			}
		}
		if len(r.Tags) > 8 {
			t.Fatalf("ParseRoute(%q): %d tags", reply, len(r.Tags))
		}
		norm, err := task.NormalizeTags(r.Tags)
		if err != nil {
			t.Fatalf("ParseRoute(%q): tags %q fail task.NormalizeTags: %v", reply, r.Tags, err)
		}
		if !slices.Equal(norm, r.Tags) {
			t.Fatalf("ParseRoute(%q): tags %q normalize to %q", reply, r.Tags, norm)
		}
	})
}

func TestMatch(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `personas:
  scribe:
    description: Writes docs
    model-tier: worker
    system-prompt: You write docs.
    auto-assign: [documentation, release-notes]
  ghost:
    enabled: false
    description: Gone
    model-tier: worker
    system-prompt: Boo.
    auto-assign: [haunting]
`)
	tests := []struct {
		name       string
		route      persona.Route
		want       string
		wantReason string
		wantOK     bool
	}{
		{
			name:  "suggested assignable persona wins",
			route: persona.Route{Category: "documentation", Suggested: "senior"},
			want:  "senior", wantReason: "the router suggested senior", wantOK: true,
		},
		{
			name:  "suggestion in its own categories",
			route: persona.Route{Category: "debugging", Suggested: "senior"},
			want:  "senior", wantReason: "the router suggested senior for debugging", wantOK: true,
		},
		{
			name:  "suggested custom persona",
			route: persona.Route{Suggested: "scribe"},
			want:  "scribe", wantReason: "the router suggested scribe", wantOK: true,
		},
		{
			name:  "internal suggestion falls back to the category",
			route: persona.Route{Category: "code-review", Suggested: "router"},
			want:  "reviewer", wantReason: "category code-review is assigned to reviewer", wantOK: true,
		},
		{
			name:  "disabled suggestion falls back to the category",
			route: persona.Route{Category: "tests", Suggested: "ghost"},
			want:  "mid", wantReason: "category tests is assigned to mid", wantOK: true,
		},
		{
			name:  "built-ins come before custom personas",
			route: persona.Route{Category: "documentation"},
			want:  "junior", wantReason: "category documentation is assigned to junior", wantOK: true,
		},
		{
			name:  "category of a custom persona",
			route: persona.Route{Category: "release-notes", Complexity: "low"},
			want:  "scribe", wantReason: "category release-notes is assigned to scribe", wantOK: true,
		},
		{
			name:  "suggestion used as a category",
			route: persona.Route{Category: "unheard-of", Suggested: "refactoring"},
			want:  "senior", wantReason: "category refactoring is assigned to senior", wantOK: true,
		},
		{
			name:       "disabled persona's category is not taken",
			route:      persona.Route{Category: "haunting"},
			wantReason: `the router suggested "" for category "haunting", which no assignable persona takes`,
		},
		{
			name:       "internal suggestion and no category",
			route:      persona.Route{Suggested: "router"},
			wantReason: `the router suggested "router" for category "", which no assignable persona takes`,
		},
		{
			name:       "nothing matches",
			route:      persona.Route{Category: "astrology", Suggested: "wizard"},
			wantReason: `the router suggested "wizard" for category "astrology", which no assignable persona takes`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, reason, ok := s.Match(tt.route)
			if got != tt.want || reason != tt.wantReason || ok != tt.wantOK {
				t.Errorf("Match(%+v) = %q, %q, %t; want %q, %q, %t", tt.route, got, reason, ok, tt.want, tt.wantReason, tt.wantOK)
			}
		})
	}
}

func TestRouterRequest(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `personas:
  scribe:
    description: Writes docs
    model-tier: worker
    system-prompt: You write docs.
    auto-assign: [documentation]
  ghost:
    enabled: false
`)
	tk := task.Task{
		Description: "fix the login redirect loop",
		Context:     "users on Safari only",
		Tags:        []string{"auth", "web"},
	}
	req := s.RouterRequest(tk, "claude-haiku-4-5")
	if req.Model != "claude-haiku-4-5" || req.MaxTokens != 300 || req.Temperature == nil || *req.Temperature != 0 || len(req.Tools) != 0 {
		t.Errorf("request: model %q, max tokens %d, temperature %v, %d tools", req.Model, req.MaxTokens, req.Temperature, len(req.Tools))
	}
	if req.System != mustGet(t, s, "router").SystemPrompt {
		t.Errorf("System is not the router persona's prompt: %q", req.System)
	}
	if len(req.Messages) != 1 || req.Messages[0].Role != llm.RoleUser {
		t.Fatalf("messages = %+v, want one user message", req.Messages)
	}
	text := req.Messages[0].Text()
	for _, want := range []string{
		"Task:\nfix the login redirect loop\n",
		"Context:\nusers on Safari only\n",
		"Tags: auth, web\n",
		"- senior: Experienced engineer, concise and direct; complex-reasoning, refactoring, debugging, performance, concurrency\n",
		"- mid: ",
		"- junior: ",
		"- reviewer: ",
		"- architect: ",
		"- scribe: Writes docs; documentation\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("request text lacks %q:\n%s", want, text)
		}
	}
	for _, unwanted := range []string{"- router:", "- watcher:", "- syncer:", "- ghost:"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("request text offers %q, which is not assignable:\n%s", unwanted, text)
		}
	}
	// Personas appear in listing order.
	if strings.Index(text, "- senior:") > strings.Index(text, "- architect:") || strings.Index(text, "- architect:") > strings.Index(text, "- scribe:") {
		t.Errorf("personas out of order:\n%s", text)
	}

	// No context or tags: no such sections.
	text = s.RouterRequest(task.Task{Description: "tidy up"}, "m").Messages[0].Text()
	if strings.Contains(text, "Context:") || strings.Contains(text, "Tags:") {
		t.Errorf("request for a task without context or tags:\n%s", text)
	}
}

// routerClient returns a real Anthropic client talking to a scripted model
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

var routedTask = task.Task{ID: "t-aaaaa", Description: "the session cookie expires too early"}

func TestClassify(t *testing.T) {
	t.Parallel()
	s := persona.Defaults()
	client, srv := routerClient(t, llmtest.Step{Text: "```json\n" + goodReply + "\n```"})
	r, resp, err := s.Classify(context.Background(), client, "claude-haiku-4-5", routedTask)
	if err != nil {
		t.Fatalf("Classify: %v", err)
	}
	want := persona.Route{Category: "debugging", Complexity: "high", Suggested: "senior", Tags: []string{"auth", "sessions"}}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("route (-want +got):\n%s", diff)
	}
	if resp == nil || resp.Usage.OutputTokens == 0 {
		t.Errorf("response = %+v, want one with usage", resp)
	}
	if got, _, ok := s.Match(r); !ok || got != "senior" {
		t.Errorf("Match = %q, %t; want senior", got, ok)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.Model != "claude-haiku-4-5" || got.System != mustGet(t, s, "router").SystemPrompt || got.MaxTokens != 300 {
		t.Errorf("request sent: model %q, max tokens %d, system %.40q", got.Model, got.MaxTokens, got.System)
	}
	if len(got.Messages) != 1 || !strings.Contains(got.Messages[0].Text(), routedTask.Description) {
		t.Errorf("request messages = %+v, want the task description", got.Messages)
	}
}

func TestClassifyNonJSONReply(t *testing.T) {
	t.Parallel()
	client, _ := routerClient(t, llmtest.Step{Text: "This looks like a debugging task for a senior engineer."})
	r, resp, err := persona.Defaults().Classify(context.Background(), client, "claude-haiku-4-5", routedTask)
	if err == nil || !strings.Contains(err.Error(), "the reply is not a JSON object") {
		t.Fatalf("Classify = %+v, %v; want a not-a-JSON-object error", r, err)
	}
	// The response comes back with the error so that its cost is charged.
	if resp == nil || resp.Message.Text() != "This looks like a debugging task for a senior engineer." {
		t.Errorf("response = %+v, want the model's reply", resp)
	}
}

func TestClassifyModelError(t *testing.T) {
	t.Parallel()
	client, _ := routerClient(t, llmtest.Step{Text: goodReply, Fault: &llmtest.Fault{Kind: llmtest.FaultAuth, Always: true}})
	_, resp, err := persona.Defaults().Classify(context.Background(), client, "claude-haiku-4-5", routedTask)
	var le *llm.Error
	if !errors.As(err, &le) || le.Class != llm.ClassAuth || !strings.Contains(err.Error(), "the router's model call failed") {
		t.Fatalf("Classify = %v, want a wrapped auth *llm.Error", err)
	}
	if resp != nil {
		t.Errorf("response = %+v, want nil", resp)
	}
}

func TestClassifyTimeout(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "task-defaults: {router-timeout: 1s}\n")
	if s.Defaults.RouterTimeout != time.Second {
		t.Fatalf("router timeout = %s, want 1s", s.Defaults.RouterTimeout)
	}
	// The server holds the request until the client gives up.
	client, srv := routerClient(t, llmtest.Step{Text: goodReply, Fault: &llmtest.Fault{Kind: llmtest.FaultStall, Always: true}})
	r, resp, err := s.Classify(context.Background(), client, "claude-haiku-4-5", routedTask)
	if err == nil || err.Error() != "the router did not answer within 1s" {
		t.Fatalf("Classify = %+v, %v; want the router did not answer within 1s", r, err)
	}
	if resp != nil {
		t.Errorf("response = %+v, want nil", resp)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Fault != llmtest.FaultStall {
		t.Errorf("requests = %+v, want 1 stalled", reqs)
	}
}

func TestClassifyCallerCancel(t *testing.T) {
	t.Parallel()
	client, _ := routerClient(t, llmtest.Step{Text: goodReply})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := persona.Defaults().Classify(ctx, client, "claude-haiku-4-5", routedTask)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "the router's model call failed") {
		t.Errorf("Classify with a cancelled context = %v, want a wrapped context.Canceled", err)
	}
}

func TestSystemPrompt(t *testing.T) {
	t.Parallel()
	if got := persona.SystemPrompt("  You are terse.\n", "BASE"); got != "You are terse.\n\nBASE" {
		t.Errorf("SystemPrompt = %q", got)
	}
	if got := persona.SystemPrompt(" \n", "BASE"); got != "BASE" {
		t.Errorf("SystemPrompt with an empty persona part = %q, want BASE", got)
	}
}
