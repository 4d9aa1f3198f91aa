package codex

import (
	"encoding/json"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// TestApprovesByManifest: an approval request is accepted only when the
// task's manifest allows what it asks for; without a manifest, or for a
// request of another kind, it is declined.
func TestApprovesByManifest(t *testing.T) {
	git := &task.Manifest{Tools: []string{"Read", "Bash"}, Commands: []string{"git"}, Writable: []string{"."}}
	edits := &task.Manifest{Tools: []string{"Read", "Edit"}, Writable: []string{"."}}
	cmd := func(c string) msg {
		p, _ := json.Marshal(map[string]any{"command": c, "itemId": "call_1"})
		return msg{ID: new(int64), Method: "item/commandExecution/requestApproval", Params: p}
	}
	patch := msg{ID: new(int64), Method: "item/fileChange/requestApproval", Params: json.RawMessage(`{"itemId":"call_2"}`)}
	perms := msg{ID: new(int64), Method: "item/permissions/requestApproval", Params: json.RawMessage(`{}`)}
	for _, c := range []struct {
		name string
		m    *task.Manifest
		req  msg
		want bool
	}{
		{"an allowed command in Codex's wrapper", git, cmd("/bin/bash -lc 'git status'"), true},
		{"a command beyond the prefixes", git, cmd("/bin/bash -lc 'echo hi > made.txt'"), false},
		{"no shell among the tools", edits, cmd("git status"), false},
		{"an edit with Edit and a writable path", edits, patch, true},
		{"an edit without Write or Edit", git, patch, false},
		{"no manifest", nil, cmd("git status"), false},
		{"another request", git, perms, false},
	} {
		ru := &run{latest: task.Task{Manifest: c.m}}
		if got := ru.approves(c.req); got != c.want {
			t.Errorf("%s: approves = %v, want %v", c.name, got, c.want)
		}
	}
	if approvalPolicy(git) != "untrusted" || approvalPolicy(edits) != "" || approvalPolicy(nil) != "" {
		t.Error("approvalPolicy: want untrusted only for a manifest naming its commands")
	}
}
