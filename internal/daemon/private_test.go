package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// TestPrivateState: a data directory that already exists 0755 and a log
// file left 0644 are restricted to their owner at start, with an event
// saying so; the database, its -wal and -shm are 0600.
func TestPrivateState(t *testing.T) {
	t.Parallel()
	home := shortTemp(t)
	data := filepath.Join(home, "data")
	logs := filepath.Join(home, "logs")
	for _, d := range []string{data, logs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
	logFile := filepath.Join(logs, "daemon.log")
	if err := os.WriteFile(logFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(logFile, 0o644); err != nil {
		t.Fatal(err)
	}

	r := start(t, home)
	p := r.paths
	if p.DataDir != data || p.LogFile != logFile {
		t.Fatalf("paths %+v, want the data directory %s and log file %s", p, data, logFile)
	}
	want := map[string]os.FileMode{
		p.DataDir: 0o700, p.RunDir: 0o700, p.LogDir: 0o700,
		p.DBFile: 0o600, p.DBFile + "-wal": 0o600, p.DBFile + "-shm": 0o600, p.LogFile: 0o600,
	}
	for path, mode := range want {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != mode {
			t.Errorf("%s mode %04o, want %04o", path, got, mode)
		}
	}

	evs, err := r.client.Events(context.Background(), event.Query{Filter: event.Filter{Kinds: []string{string(event.KindDaemonPermissions)}}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("permission events = %v, %v; want one", evs, err)
	}
	got := evs[0].Payload.(event.DaemonPermissions).Corrected
	wantFixed := []event.ModeCorrection{
		{Path: data, From: "0755", To: "0700"},
		{Path: logs, From: "0755", To: "0700"},
		{Path: logFile, From: "0644", To: "0600"},
	}
	for _, w := range wantFixed {
		if !slices.Contains(got, w) {
			t.Errorf("corrections %+v lack %+v", got, w)
		}
	}
	if len(got) != len(wantFixed) {
		t.Errorf("corrections %+v, want exactly %+v", got, wantFixed)
	}
}

// TestPrivateStateQuietWhenPrivate: a start that finds nothing to correct
// records no permission event.
func TestPrivateStateQuietWhenPrivate(t *testing.T) {
	t.Parallel()
	r := start(t, shortTemp(t))
	evs, err := r.client.Events(context.Background(), event.Query{Filter: event.Filter{Kinds: []string{string(event.KindDaemonPermissions)}}})
	if err != nil || len(evs) != 0 {
		t.Fatalf("permission events = %v, %v; want none", evs, err)
	}
}
