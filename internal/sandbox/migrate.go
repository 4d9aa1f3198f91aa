package sandbox

import (
	"bufio"
	"compress/flate"
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
// lacks is copied there (a file of the daemon's, never a link to from's,
// which from's writer could still change), its content checked against its
// name as it is copied; then packs, each with its index last (git finds a
// pack by its index). Everything moved is synced, with the directories that
// gained it, before it returns: from may be deleted then. It can be run
// again after an interruption: what to holds already is kept as it is.
func MigrateObjects(from, to string) (Moved, error) {
	m, _, err := migrate(from, to, nil)
	return m, err
}

// migrate is MigrateObjects, of the loose directories of from named in
// fans (nil: all); it also returns the loose object files of from that to
// now holds, durably (those it held already included), and those found
// corrupt, which may be removed from from.
func migrate(from, to string, fans []string) (Moved, []string, error) {
	var m Moved
	if fans == nil {
		entries, err := os.ReadDir(from)
		if err != nil {
			return m, nil, err
		}
		for _, e := range entries {
			if e.IsDir() && len(e.Name()) == 2 && isHex(e.Name()) {
				fans = append(fans, e.Name())
			}
		}
	}
	var placed, done []string
	dirty := map[string]bool{}
	for _, fan := range fans {
		objs, err := os.ReadDir(filepath.Join(from, fan))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return m, nil, err
		}
		for _, o := range objs {
			name := o.Name()
			if !o.Type().IsRegular() || (len(name) != 38 && len(name) != 62) || !isHex(name) {
				continue // git's temporary files, and anything not an object
			}
			src := filepath.Join(from, fan, name)
			dst := filepath.Join(to, fan, name)
			if _, err := os.Lstat(dst); err == nil {
				// Held already, or placed by a run cut short before it
				// synced: synced again below.
				m.Present++
				placed = append(placed, dst)
				done = append(done, src)
				dirty[filepath.Dir(dst)] = true
				continue
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return m, nil, err
			}
			moved, err := copyChecked(src, dst, fan+name)
			if errors.Is(err, errCorrupt) {
				m.Corrupt = append(m.Corrupt, fan+name)
				done = append(done, src)
				continue
			}
			if err != nil {
				return m, nil, fmt.Errorf("moving object %s%s: %w", fan, name, err)
			}
			if moved {
				m.Objects++
			} else {
				m.Present++
			}
			placed = append(placed, dst)
			done = append(done, src)
			dirty[filepath.Dir(dst)] = true
		}
	}
	// The loose objects are made durable before any pack: a pack's index
	// is synced on its own, after the pack, so it never names what a crash
	// could lose.
	if len(placed) > 0 {
		if err := syncMoved(to, placed, slices.Sorted(maps.Keys(dirty))); err != nil {
			return m, nil, fmt.Errorf("syncing the moved objects: %w", err)
		}
	}
	packs, err := migratePacks(filepath.Join(from, "pack"), filepath.Join(to, "pack"))
	m.Packs = packs
	if err != nil {
		return m, nil, err
	}
	return m, done, nil
}

// errCorrupt is a loose object whose content does not match its name.
var errCorrupt = errors.New("content does not match the name")

// copyChecked copies the loose object file src to dst, written beside it
// and linked in once whole, when its content, as read, is the object named
// hexName (its inflated content hashes to the name, SHA-1 for 40 digits,
// SHA-256 for 64, and nothing follows the compressed stream); else it
// returns errCorrupt and places nothing. What is checked is what is
// written: src may change meanwhile, dst never holds anything else. It
// reports false when dst exists already.
func copyChecked(src, dst, hexName string) (bool, error) {
	h, err := objectHash(hexName)
	if err != nil {
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
	cerr := inflateHash(bufio.NewReader(io.TeeReader(in, out)), h, hexName)
	if err := out.Close(); err != nil && cerr == nil {
		cerr = err
	}
	if cerr != nil {
		return false, cerr
	}
	if err := os.Link(tmp, dst); errors.Is(err, fs.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}

// inflateHash reads one loose object from br to its end, hashing its
// inflated content with h: errCorrupt unless the hash is the name and
// nothing follows the compressed stream (git refuses such an object).
func inflateHash(br *bufio.Reader, h hash.Hash, hexName string) error {
	z, err := zlib.NewReader(br)
	if err != nil {
		return fmt.Errorf("%w: %v", errCorrupt, err)
	}
	defer z.Close()
	if _, err := io.Copy(h, z); err != nil {
		if errors.Is(err, zlib.ErrChecksum) || errors.Is(err, zlib.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF) || isFlateError(err) {
			return fmt.Errorf("%w: %v", errCorrupt, err)
		}
		return err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: data after the object", errCorrupt)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hexName {
		return fmt.Errorf("%w: %s hashes to %s", errCorrupt, hexName, got)
	}
	return nil
}

// isFlateError reports a malformed compressed stream.
func isFlateError(err error) bool {
	var c flate.CorruptInputError
	return errors.As(err, &c)
}

// objectHash returns the hash of objects named by hexName's length.
func objectHash(hexName string) (hash.Hash, error) {
	switch len(hexName) {
	case 2 * sha1.Size:
		return sha1.New(), nil
	case 2 * sha256.Size:
		return sha256.New(), nil
	}
	return nil, fmt.Errorf("%s: not an object name", hexName)
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
// systems). It moves packs, which a task's command cannot make in its
// directory (it may not make a pack directory there) but a daemon's own
// git could. dst is never replaced: it reports false when dst exists
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

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
