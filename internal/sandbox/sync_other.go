//go:build !linux

package sandbox

// syncMoved makes durable the files and directories a migration placed:
// each synced.
func syncMoved(_ string, files, dirs []string) error {
	for _, f := range files {
		if err := syncFile(f); err != nil {
			return err
		}
	}
	for _, d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}
