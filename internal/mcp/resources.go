package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The resources: a task's conversation log and its report.
const (
	resourcePrefix = "neuraphage://tasks/"
	logTemplate    = resourcePrefix + "{id}/log"
	reportTemplate = resourcePrefix + "{id}/report"
)

func (h *handlers) addResources(s *mcp.Server) {
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "task-log", URITemplate: logTemplate, MIMEType: "application/json",
		Description: "A task's stored conversation with its model: each message with its tool calls and results, in order."}, h.readLog)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "task-report", URITemplate: reportTemplate, MIMEType: "text/markdown",
		Description: "A task's report: status, duration, files changed, summary, where it landed."}, h.readReport)
}

// resourceTask returns the task id of a resource URI ending in suffix.
func resourceTask(uri, suffix string) (string, error) {
	id, ok := strings.CutPrefix(uri, resourcePrefix)
	if ok {
		id, ok = strings.CutSuffix(id, suffix)
	}
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", mcp.ResourceNotFoundError(uri)
	}
	return id, nil
}

func (h *handlers) readLog(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id, err := resourceTask(req.Params.URI, "/log")
	if err != nil {
		return nil, err
	}
	c, err := h.client(ctx)
	if err != nil {
		return nil, err
	}
	l, err := c.TaskLog(ctx, id, 0)
	if err != nil {
		return nil, explain(err)
	}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the log: %w", err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
}

func (h *handlers) readReport(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id, err := resourceTask(req.Params.URI, "/report")
	if err != nil {
		return nil, err
	}
	c, err := h.client(ctx)
	if err != nil {
		return nil, err
	}
	r, err := c.TaskReport(ctx, id)
	if err != nil {
		return nil, explain(err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: r.Markdown}}}, nil
}
