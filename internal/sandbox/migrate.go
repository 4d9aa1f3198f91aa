package sandbox

import (
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// MigrateObjects moves the objects of the git object directory from into
// the object directory to, leaving from as it is: each loose object that to
// lacks is hard linked there (copied where a link cannot be made), once its
// content is checked against its name; then packs, each with its index
// last (git finds a pack by its index). Everything moved is synced, with
// the directories that gained it, before it returns: from may be deleted
// then. It can be run again after an interruption: what to holds already is
// kept as it is.
func MigrateObjects(from, to string) (Moved, error) {
	var m Moved
	entries, err := os.ReadDir(from)
	if err != nil {
		return m, err
	}
	var placed []string
	dirty := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() || len(e.Name()) != 2 || !isHex(e.Name()) {
			continue
		}
		objs, err := os.ReadDir(filepath.Join(from, e.Name()))
		if err != nil {
			return m, err
		}
		for _, o := range objs {
			name := o.Name()
			if !o.Type().IsRegular() || (len(name) != 38 && len(name) != 62) || !isHex(name) {
				continue // git's temporary files, and anything not an object
			}
			src := filepath.Join(from, e.Name(), name)
			dst := filepath.Join(to, e.Name(), name)
			if _, err := os.Lstat(dst); err == nil {
				// Held already, or placed by a run cut short before it
				// synced: synced again below.
				m.Present++
				placed = append(placed, dst)
				dirty[filepath.Dir(dst)] = true
				continue
			}
			if err := checkLoose(src, e.Name()+name); err != nil {
				m.Corrupt = append(m.Corrupt, e.Name()+name)
				continue
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return m, err
			}
			moved, err := place(src, dst)
			if err != nil {
				return m, fmt.Errorf("moving object %s%s: %w", e.Name(), name, err)
			}
			if moved {
				m.Objects++
			} else {
				m.Present++
			}
			placed = append(placed, dst)
			dirty[filepath.Dir(dst)] = true
		}
	}
	// The loose objects are made durable before any pack: a pack's index
	// is synced on its own, after the pack, so it never names what a crash
	// could lose.
	if len(placed) > 0 {
		if err := syncMoved(to, placed, slices.Sorted(maps.Keys(dirty))); err != nil {
			return m, fmt.Errorf("syncing the moved objects: %w", err)
		}
	}
	packs, err := migratePacks(filepath.Join(from, "pack"), filepath.Join(to, "pack"))
	m.Packs = packs
	if err != nil {
		return m, err
	}
	return m, nil
}

// migratePacks moves the packs of from into to: every file of a pack but
// its index first, then the index; each synced, then the directory.
func migratePacks(from, to string) (int, error) {
	entries, err := os.ReadDir(from)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !strings.HasPrefix(base, "pack-") || !e.Type().IsRegular() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(to, e.Name())); err == nil {
			continue // moved already
		}
		if _, err := os.Lstat(filepath.Join(from, base+".pack")); err != nil {
			continue // an index without its pack is of no use
		}
		if err := os.MkdirAll(to, 0o755); err != nil {
			return n, err
		}
		var files []string
		for _, f := range entries {
			if strings.HasPrefix(f.Name(), base+".") && f.Name() != e.Name() && f.Type().IsRegular() {
				files = append(files, f.Name())
			}
		}
		for _, f := range append(files, e.Name()) {
			// Each is synced as it is placed: the pack is whole
			// before its index makes it seen.
			if _, err := place(filepath.Join(from, f), filepath.Join(to, f)); err != nil {
				return n, fmt.Errorf("moving %s: %w", f, err)
			}
			if err := syncFile(filepath.Join(to, f)); err != nil {
				return n, err
			}
		}
		if err := syncDir(to); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// place makes dst hold src's content: a hard link, or a copy written beside
// dst and linked in where a link cannot be made (across file
// systems). dst is never replaced: it reports false when dst exists
// already. The caller syncs what was placed (syncMoved).
func place(src, dst string) (bool, error) {
	err := os.Link(src, dst)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	case !errors.Is(err, syscall.EXDEV) && !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EMLINK):
		return false, err
	}
	in, err := os.Open(src)
	if err != nil {
		return false, err
	}
	defer in.Close()
	tmp := dst + ".tmp-migrate"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o444)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return false, err
	}
	if err := out.Close(); err != nil {
		return false, err
	}
	if err := os.Link(tmp, dst); errors.Is(err, fs.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}

// syncFile syncs a file's content to disk.
func syncFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// checkLoose checks that the loose object file p holds the object named
// hexName: its inflated content hashes to the name (SHA-1 for 40 digits,
// SHA-256 for 64).
func checkLoose(p, hexName string) error {
	want, err := hex.DecodeString(hexName)
	if err != nil {
		return err
	}
	var h hash.Hash
	switch len(want) {
	case sha1.Size:
		h = sha1.New()
	case sha256.Size:
		h = sha256.New()
	default:
		return fmt.Errorf("%s: not an object name", hexName)
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	z, err := zlib.NewReader(f)
	if err != nil {
		return err
	}
	defer z.Close()
	if _, err := io.Copy(h, z); err != nil {
		return err
	}
	if got := h.Sum(nil); string(got) != string(want) {
		return fmt.Errorf("%s: content hashes to %x", hexName, got)
	}
	return nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
