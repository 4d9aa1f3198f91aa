package enginetest

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// The objects a long-lived CLI's turn writes (its commits) must be in the
// repository's shared store when the turn's end is stored
// (extproc.Proc.Settle). A fake CLI writes Object with WriteObject before
// it ends a turn; ObjectsRun sets up the repository, and ObjectWatch
// checks at each turn end.

// objectContent is the content of the blob a fake CLI writes.
const objectContent = "an object a turn of the CLI wrote\n"

// object is the blob as a loose object: its name and its file.
func object() (name string, file []byte) {
	raw := fmt.Sprintf("blob %d\x00%s", len(objectContent), objectContent)
	sum := sha1.Sum([]byte(raw))
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write([]byte(raw))
	w.Close()
	return hex.EncodeToString(sum[:]), b.Bytes()
}

// WriteObject writes the blob as a loose object into the object directory
// dir (a command's GIT_OBJECT_DIRECTORY), as a commit would.
func WriteObject(dir string) error {
	if dir == "" {
		return errors.New("no GIT_OBJECT_DIRECTORY")
	}
	name, file := object()
	if err := os.MkdirAll(filepath.Join(dir, name[:2]), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name[:2], name[2:]), file, 0o444)
}

// ObjectsRun is a repository whose task t has an object directory, and a
// launcher (the sandbox off) that points t's commands at it: the Run's
// Repo, Branch and Launcher to use.
type ObjectsRun struct {
	Repo, Branch string
	Launcher     *sandbox.Launcher
	// Shared and Own are where the blob is in the shared store and in the
	// task's object directory.
	Shared, Own string
}

// NewObjectsRun makes the repository (its .git/objects only) and task id's
// object directory.
func NewObjectsRun(tb testing.TB, id task.ID) ObjectsRun {
	tb.Helper()
	repo := tb.TempDir()
	common := filepath.Join(repo, ".git")
	if err := os.MkdirAll(filepath.Join(common, "objects", "info"), 0o755); err != nil {
		tb.Fatal(err)
	}
	own, err := sandbox.ProvideObjects(common, string(id))
	if err != nil {
		tb.Fatal(err)
	}
	name, _ := object()
	return ObjectsRun{Repo: repo, Branch: "neuraphage/" + string(id) + "/work",
		Launcher: &sandbox.Launcher{BranchDir: "neuraphage", Status: sandbox.Status{Off: true}},
		Shared:   filepath.Join(common, "objects", name[:2], name[2:]), Own: filepath.Join(own, name[:2], name[2:])}
}

// ObjectWatch is a Host noting, at each commit of a turn's end (a step
// with a model call), whether the blob is in the shared store.
type ObjectWatch struct {
	*Host
	Shared string
	// Ends counts the turn ends stored, Settled those at which the blob
	// was in the shared store.
	Ends, Settled atomic.Int32
}

// Commit implements engine.Host.
func (w *ObjectWatch) Commit(ctx context.Context, s engine.Step) (task.Task, error) {
	if s.Call != nil {
		w.Ends.Add(1)
		if _, err := os.Stat(w.Shared); err == nil {
			w.Settled.Add(1)
		}
	}
	return w.Host.Commit(ctx, s)
}

// Check fails tb unless the blob was in the shared store at every turn
// end, and is no longer in the task's object directory.
func (w *ObjectWatch) Check(tb testing.TB, or ObjectsRun) {
	tb.Helper()
	if w.Ends.Load() == 0 {
		tb.Fatal("no turn's end was stored")
	}
	if w.Settled.Load() != w.Ends.Load() {
		tb.Errorf("the object was in the shared store at %d of %d turn ends; want all", w.Settled.Load(), w.Ends.Load())
	}
	if _, err := os.Stat(or.Own); err == nil {
		tb.Errorf("the object is still in the task's object directory: %s", or.Own)
	}
}
