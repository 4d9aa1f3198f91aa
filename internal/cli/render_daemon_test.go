package cli

import (
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// Daemon and sandbox events read as sentences, not JSON.
func TestDescribeDaemonEvents(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		p    event.Payload
		want string
	}{
		{event.DaemonPermissions{Corrected: []event.ModeCorrection{
			{Path: "/h/data", From: "0755", To: "0700"},
			{Path: "/h/data/neuraphage.db", From: "0644", To: "0600"},
		}}, "restricted 2 path(s) readable by others to their owner: /h/data (0755 → 0700), /h/data/neuraphage.db (0644 → 0600)"},
		{event.DaemonPermissions{}, "private state: nothing to restrict"},
		{event.TaskSandbox{Mode: "none — kernel lacks Landlock; deny-list only", Note: "commands run behind the deny-list alone, not confined: none — kernel lacks Landlock; deny-list only"},
			"sandbox: commands run behind the deny-list alone, not confined: none — kernel lacks Landlock; deny-list only"},
	} {
		if got := describeEvent(event.New(t0, "", tt.p)); got != tt.want {
			t.Errorf("describeEvent(%s) =\n%q; want\n%q", tt.p.EventKind(), got, tt.want)
		}
	}
}
