package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// readOnly marks a tool that changes nothing.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true}

func (h *handlers) addTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "spawn_task", Description: "Start a coding task in the background, in its own git worktree. Returns its id at once; " +
		"the task runs without you. Its work lands on the repository's branch through the merge queue when it completes. " +
		"Spawn all tasks of a batch, then wait_tasks."}, h.spawn)
	mcp.AddTool(s, &mcp.Tool{Name: "list_tasks", Description: "List tasks with their status and cost: the unfinished ones by default, or those in the given statuses.",
		Annotations: readOnly, InputSchema: withEnums[ListInput](map[string][]any{"status": statuses})}, h.list)
	mcp.AddTool(s, &mcp.Tool{Name: "get_task", Description: "Show one task: status, health, what it is doing now, cost, worktree, blockers, queued messages and merge state.",
		Annotations: readOnly}, h.get)
	mcp.AddTool(s, &mcp.Tool{Name: "wait_tasks", Description: "Wait until all (or any) of the given tasks finish (completed, failed or cancelled), or until the timeout. " +
		"Sends progress notifications as tasks change status. Also returns early when a task asks a question (status waiting): answer it with answer_task and wait again.",
		Annotations: readOnly, InputSchema: withEnums[WaitInput](map[string][]any{"mode": {"all", "any"}})}, h.wait)
	mcp.AddTool(s, &mcp.Tool{Name: "send_message", Description: "Send a message to a task: guidance, a correction, more context. " +
		"It is read at the task's next turn; urgent interrupts the turn in flight."}, h.send)
	mcp.AddTool(s, &mcp.Tool{Name: "answer_task", Description: "Answer the question of a task in status waiting; it resumes with the answer."}, h.answer)
	mcp.AddTool(s, &mcp.Tool{Name: "pause_task", Description: "Pause a task at its next boundary, keeping its conversation; resume_task continues it."}, h.action(client.Pause))
	mcp.AddTool(s, &mcp.Tool{Name: "resume_task", Description: "Resume a paused task."}, h.action(client.Resume))
	mcp.AddTool(s, &mcp.Tool{Name: "cancel_task", Description: "Cancel a task: it stops and its work does not land. Its committed work is kept on its branch.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}}, h.action(client.Cancel))
	mcp.AddTool(s, &mcp.Tool{Name: "get_report", Description: "The report of a task: status, duration, the files it changed with line counts, its summary and where it landed, as markdown for the user.",
		Annotations: readOnly}, h.report)
	mcp.AddTool(s, &mcp.Tool{Name: "search_knowledge", Description: "Search what tasks learned about the repository (conventions, pitfalls, where things live).",
		Annotations: readOnly}, h.search)
	mcp.AddTool(s, &mcp.Tool{Name: "merge_status", Description: "The merge queue: entries waiting to land on the branch and the newest landed or failed ones.",
		Annotations: readOnly}, h.mergeStatus)
}

func ptr[T any](v T) *T { return &v }

// statuses are the task statuses, for list_tasks's schema.
var statuses = []any{"queued", "running", "waiting", "paused", "merging", "completed", "failed", "cancelled"}

// withEnums returns the input schema inferred from T with the allowed values
// of some properties (of their items, for a list).
func withEnums[T any](enums map[string][]any) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("the schema of %T: %v", *new(T), err))
	}
	for name, values := range enums {
		p := s.Properties[name]
		if p == nil {
			panic(fmt.Sprintf("the schema of %T has no property %q", *new(T), name))
		}
		if p.Items != nil {
			p = p.Items
		}
		p.Enum = values
	}
	return s
}

func (h *handlers) spawn(ctx context.Context, _ *mcp.CallToolRequest, in SpawnInput) (*mcp.CallToolResult, SpawnOutput, error) {
	if strings.TrimSpace(in.Description) == "" {
		return nil, SpawnOutput{}, errors.New("description is empty: say what the task must do")
	}
	c, err := h.client(ctx)
	if err != nil {
		return nil, SpawnOutput{}, err
	}
	req := api.CreateTaskRequest{Description: in.Description, Context: in.Context, Tags: in.Tags, Priority: in.Priority,
		ParentID: in.ParentID, Persona: in.Persona, Engine: in.Engine, Model: in.Model, Repo: in.Repo, Watch: in.Watch,
		Budget: api.Budget{MaxIterations: in.MaxTurns, MaxTokens: in.MaxTokens, MaxCostUSD: in.BudgetUSD},
		// A task with dependencies is held until they are recorded, so it
		// cannot start before them.
		NoStart: len(in.DependsOn) > 0}
	t, err := c.CreateTask(ctx, req)
	if err != nil {
		return nil, SpawnOutput{}, explain(err)
	}
	if len(in.DependsOn) > 0 {
		for _, b := range in.DependsOn {
			if _, err := c.Depend(ctx, string(t.ID), b); err != nil {
				_, _ = c.Act(context.WithoutCancel(ctx), string(t.ID), client.Cancel, "a dependency could not be recorded")
				return nil, SpawnOutput{}, fmt.Errorf("task %s was cancelled: depends_on %q: %w", t.ID, b, explain(err))
			}
		}
		if t, err = c.Act(ctx, string(t.ID), client.Resume, ""); err != nil {
			return nil, SpawnOutput{}, fmt.Errorf("task %s was created paused and could not be started: %w", t.ID, explain(err))
		}
	}
	return nil, SpawnOutput{ID: string(t.ID), Status: string(t.Status)}, nil
}

const defaultListLimit = 200

func (h *handlers) list(ctx context.Context, _ *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, ListOutput, error) {
	q := client.ListQuery{All: in.All, Limit: in.Limit}
	if q.Limit <= 0 {
		q.Limit = defaultListLimit
	}
	for _, s := range in.Status {
		st := task.Status(s)
		if !validStatus(st) {
			return nil, ListOutput{}, fmt.Errorf("unknown status %q: use queued, running, waiting, paused, merging, completed, failed or cancelled", s)
		}
		q.Statuses = append(q.Statuses, st)
	}
	c, err := h.client(ctx)
	if err != nil {
		return nil, ListOutput{}, err
	}
	l, err := c.ListPage(ctx, q)
	if err != nil {
		return nil, ListOutput{}, explain(err)
	}
	out := ListOutput{Tasks: make([]TaskSummary, 0, len(l.Tasks)), More: l.Next != ""}
	for _, s := range l.Tasks {
		out.Tasks = append(out.Tasks, summaryOf(s))
	}
	return nil, out, nil
}

func validStatus(s task.Status) bool {
	switch s {
	case task.Queued, task.Running, task.Waiting, task.Paused, task.Merging, task.Completed, task.Failed, task.Cancelled:
		return true
	}
	return false
}

func (h *handlers) get(ctx context.Context, _ *mcp.CallToolRequest, in RefInput) (*mcp.CallToolResult, TaskInfo, error) {
	c, err := h.client(ctx)
	if err != nil {
		return nil, TaskInfo{}, err
	}
	d, err := c.GetTask(ctx, in.ID)
	if err != nil {
		return nil, TaskInfo{}, explain(err)
	}
	t := d.Task
	info := TaskInfo{ID: string(t.ID), Description: t.Description, Status: string(t.Status), Finished: t.Status.Terminal(),
		CloseReason: t.CloseReason, Persona: t.Persona, Engine: t.Engine, Model: t.Model, Tags: t.Tags, Repo: t.Repo,
		Branch: t.Branch, Worktree: t.Worktree, Iterations: t.Usage.Iterations, Tokens: t.Usage.InputTokens + t.Usage.OutputTokens,
		CostUSD: t.Usage.CostUSD, CreatedAt: stamp(t.CreatedAt)}
	if t.FinishedAt != nil {
		info.FinishedAt = stamp(*t.FinishedAt)
	}
	for _, b := range d.Blockers {
		info.Blockers = append(info.Blockers, string(b))
	}
	for _, m := range d.Pending {
		info.Pending = append(info.Pending, m.Text)
	}
	// Health and merge state come from parts of the daemon that may be off
	// (supervision, worktrees): without them the task is still shown.
	if hs, err := c.SupervisionHealth(ctx, string(t.ID)); err == nil && len(hs) > 0 {
		info.Health, info.Doing, info.Diagnosis = hs[0].Status, hs[0].Activity, hs[0].Diagnosis
	}
	if t.Status == task.Merging || t.Status.Terminal() {
		if ms, err := c.MergeStatus(ctx, 50); err == nil {
			info.Merge = findMerge(ms, t.ID)
		}
	}
	return nil, info, nil
}

// findMerge returns the newest merge entry of task id.
func findMerge(ms api.MergeStatus, id task.ID) *Merge {
	for _, l := range [][]api.MergeEntry{ms.Open, ms.Recent} {
		for _, e := range l {
			if e.TaskID == id {
				m := mergeOf(e).Merge
				return &m
			}
		}
	}
	return nil
}

func (h *handlers) send(ctx context.Context, _ *mcp.CallToolRequest, in MessageInput) (*mcp.CallToolResult, MessageOutput, error) {
	if strings.TrimSpace(in.Text) == "" {
		return nil, MessageOutput{}, errors.New("text is empty")
	}
	c, err := h.client(ctx)
	if err != nil {
		return nil, MessageOutput{}, err
	}
	m, err := c.SendMessage(ctx, in.ID, api.SendRequest{Text: in.Text, Urgent: in.Urgent})
	if err != nil {
		return nil, MessageOutput{}, explain(err)
	}
	return nil, MessageOutput{MessageID: m.ID, TaskStatus: string(m.TaskStatus)}, nil
}

func (h *handlers) answer(ctx context.Context, _ *mcp.CallToolRequest, in AnswerInput) (*mcp.CallToolResult, MessageOutput, error) {
	if strings.TrimSpace(in.Answer) == "" {
		return nil, MessageOutput{}, errors.New("answer is empty")
	}
	c, err := h.client(ctx)
	if err != nil {
		return nil, MessageOutput{}, err
	}
	d, err := c.GetTask(ctx, in.ID)
	if err != nil {
		return nil, MessageOutput{}, explain(err)
	}
	if d.Task.Status != task.Waiting {
		return nil, MessageOutput{}, fmt.Errorf("task %s asked nothing: it is %s, not waiting (send_message steers a task that is not waiting)", d.Task.ID, d.Task.Status)
	}
	m, err := c.SendMessage(ctx, string(d.Task.ID), api.SendRequest{Text: in.Answer})
	if err != nil {
		return nil, MessageOutput{}, explain(err)
	}
	return nil, MessageOutput{MessageID: m.ID, TaskStatus: string(m.TaskStatus)}, nil
}

func (h *handlers) action(a client.Action) mcp.ToolHandlerFor[ActionInput, ActionOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in ActionInput) (*mcp.CallToolResult, ActionOutput, error) {
		c, err := h.client(ctx)
		if err != nil {
			return nil, ActionOutput{}, err
		}
		t, err := c.Act(ctx, in.ID, a, in.Reason)
		if err != nil {
			return nil, ActionOutput{}, explain(err)
		}
		return nil, ActionOutput{ID: string(t.ID), Status: string(t.Status)}, nil
	}
}

func (h *handlers) report(ctx context.Context, _ *mcp.CallToolRequest, in RefInput) (*mcp.CallToolResult, ReportOutput, error) {
	c, err := h.client(ctx)
	if err != nil {
		return nil, ReportOutput{}, err
	}
	r, err := c.TaskReport(ctx, in.ID)
	if err != nil {
		return nil, ReportOutput{}, explain(err)
	}
	out := ReportOutput{ID: string(r.TaskID), Status: string(r.Status), Summary: r.Summary, Landed: r.Landed,
		Files: make([]FileChange, 0, len(r.Files)), Markdown: r.Markdown}
	for _, f := range r.Files {
		out.Files = append(out.Files, FileChange{Path: f.Path, Added: f.Added, Deleted: f.Deleted})
	}
	// The markdown is what a host shows; the structured fields follow it.
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Markdown}}}, out, nil
}

func (h *handlers) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	c, err := h.client(ctx)
	if err != nil {
		return nil, SearchOutput{}, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	ls, err := c.Learnings(ctx, in.Query, in.Task, limit)
	if err != nil {
		return nil, SearchOutput{}, explain(err)
	}
	out := SearchOutput{Learnings: make([]Learning, 0, len(ls))}
	for _, l := range ls {
		x := Learning{ID: l.ID, Summary: l.Summary, Detail: l.Detail, Tags: l.Tags, Files: l.Files}
		for _, s := range l.Sources {
			x.Tasks = append(x.Tasks, string(s.TaskID))
		}
		out.Learnings = append(out.Learnings, x)
	}
	return nil, out, nil
}

func (h *handlers) mergeStatus(ctx context.Context, _ *mcp.CallToolRequest, in MergeInput) (*mcp.CallToolResult, MergeOutput, error) {
	c, err := h.client(ctx)
	if err != nil {
		return nil, MergeOutput{}, err
	}
	recent := in.Recent
	if recent <= 0 {
		recent = 20
	}
	ms, err := c.MergeStatus(ctx, recent)
	if err != nil {
		return nil, MergeOutput{}, explain(err)
	}
	out := MergeOutput{Open: make([]MergeEntry, 0, len(ms.Open)), Recent: make([]MergeEntry, 0, len(ms.Recent))}
	for _, e := range ms.Open {
		out.Open = append(out.Open, mergeOf(e))
	}
	for _, e := range ms.Recent {
		out.Recent = append(out.Recent, mergeOf(e))
	}
	return nil, out, nil
}
