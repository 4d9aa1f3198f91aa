package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
)

// makePrivate creates the daemon's directories 0700 and takes group and
// other access away from those, and from the database and log files, that
// already exist with looser modes (a data directory made 0755 by hand, a
// database created 0644 by an older version). It returns what it corrected.
func makePrivate(p config.Paths) ([]event.ModeCorrection, error) {
	var fixed []event.ModeCorrection
	fix := func(path string, want fs.FileMode) error {
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 == 0 {
			return nil
		}
		if err := os.Chmod(path, want); err != nil {
			return fmt.Errorf("restricting %s to its owner: %w", path, err)
		}
		fixed = append(fixed, event.ModeCorrection{Path: path, From: fmt.Sprintf("%04o", fi.Mode().Perm()), To: fmt.Sprintf("%04o", want)})
		return nil
	}
	for _, dir := range []string{p.RunDir, p.DataDir, p.LogDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dir, err)
		}
		if err := fix(dir, 0o700); err != nil {
			return nil, err
		}
	}
	for _, f := range []string{p.DBFile, p.DBFile + "-wal", p.DBFile + "-shm", p.LogFile} {
		if err := fix(f, 0o600); err != nil {
			return nil, err
		}
	}
	return fixed, nil
}
