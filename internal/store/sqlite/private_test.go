package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
)

// TestDatabaseFilesPrivate: the database and its -wal and -shm files are
// created readable by their owner only, whatever the umask lets through.
func TestDatabaseFilesPrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data", "neuraphage.db")
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AppendEvents(ctx, event.New(time.Now(), "", event.DaemonStarted{PID: 1, Version: "test"})); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s mode %04o, want 0600", filepath.Base(f), got)
		}
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o700 {
		t.Errorf("data directory mode %04o, want 0700", got)
	}
}
