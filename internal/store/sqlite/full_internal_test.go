package sqlite

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/store"
)

// ENOSPC from the file system (a WAL or temp file that cannot grow) is a
// full disk as much as SQLITE_FULL is; other errors are not.
func TestFullRecognizesENOSPC(t *testing.T) {
	enospc := fmt.Errorf("committing 1 operations: %w", &os.PathError{Op: "write", Path: "neuraphage.db-wal", Err: syscall.ENOSPC})
	if err := full(enospc); !errors.Is(err, store.ErrFull) || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("full(ENOSPC) = %v; want store.ErrFull, keeping the cause", err)
	}
	if err := full(store.ErrNotFound); errors.Is(err, store.ErrFull) {
		t.Errorf("full(ErrNotFound) = %v; want it unchanged", err)
	}
	if full(nil) != nil {
		t.Error("full(nil) is not nil")
	}
}
