package server_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/api/server"
	"github.com/neuraphage/neuraphage-go/internal/lifecycle"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

type fakeReports struct{ asked []task.ID }

func (f *fakeReports) Report(_ context.Context, id task.ID) (lifecycle.Report, error) {
	f.asked = append(f.asked, id)
	return lifecycle.Report{ID: id, Description: "add token expiry", Status: task.Completed, Duration: 222 * time.Second,
		PR: "https://github.com/org/repo/pull/147", Files: []lifecycle.FileChange{{Path: "a.go", Added: 2, Deleted: 1}, {Path: "b.png", Binary: true}},
		Summary: "done", Logs: []string{"neuraphage task log " + string(id)}}, nil
}

func serveReports(t *testing.T, r server.Reports) *client.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(server.New(server.Config{Tasks: newFake(), Reports: r, Logger: slog.New(slog.DiscardHandler)}))
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	c := client.New(sock)
	t.Cleanup(c.Close)
	return c
}

func TestTaskReportThroughTheClient(t *testing.T) {
	t.Parallel()
	f := &fakeReports{}
	c := serveReports(t, f)
	got, err := c.TaskReport(context.Background(), "4k2")
	if err != nil {
		t.Fatal(err)
	}
	if got.TaskID != "t-4k2x9" || got.DurationMs != 222000 || got.PRURL != "https://github.com/org/repo/pull/147" ||
		len(got.Files) != 2 || got.Files[0] != (api.FileChange{Path: "a.go", Added: 2, Deleted: 1}) || !got.Files[1].Binary {
		t.Errorf("report %+v", got)
	}
	if !strings.Contains(got.Markdown, "**Status:** Success (3m 42s)\n**PR:** https://github.com/org/repo/pull/147\n") {
		t.Errorf("markdown:\n%s", got.Markdown)
	}
	_, err = c.TaskReport(context.Background(), "zzz")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code() != api.CodeNotFound {
		t.Errorf("an unknown task: %v, want not found", err)
	}
	if len(f.asked) != 1 {
		t.Errorf("reports asked for %v, want the one resolved task", f.asked)
	}
}

func TestTaskReportUnavailable(t *testing.T) {
	t.Parallel()
	c := serveReports(t, nil)
	_, err := c.TaskReport(context.Background(), "4k2")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code() != api.CodeUnavailable {
		t.Errorf("no reports served: %v, want unavailable", err)
	}
}
