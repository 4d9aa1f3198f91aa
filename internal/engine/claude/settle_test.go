package claude

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/enginetest"
	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// settleBlob is the object the fake CLI writes in mode "object".
const settleBlob = "an object a turn of the CLI wrote\n"

// blobObject is settleBlob as a loose object: its name and its file.
func blobObject() (name string, file []byte) {
	raw := fmt.Sprintf("blob %d\x00%s", len(settleBlob), settleBlob)
	sum := sha1.Sum([]byte(raw))
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write([]byte(raw))
	w.Close()
	return hex.EncodeToString(sum[:]), b.Bytes()
}

// writeObject writes settleBlob as a loose object into the object
// directory dir.
func writeObject(dir string) error {
	if dir == "" {
		return fmt.Errorf("no GIT_OBJECT_DIRECTORY")
	}
	name, file := blobObject()
	if err := os.MkdirAll(filepath.Join(dir, name[:2]), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name[:2], name[2:]), file, 0o444)
}

// settleHost notes, when the turn's result is committed, whether the
// object the CLI wrote is in the shared store then.
type settleHost struct {
	*enginetest.Host
	shared  string // the object's path in the shared store
	results atomic.Int32
	settled atomic.Int32
}

func (s *settleHost) Commit(ctx context.Context, st engine.Step) (task.Task, error) {
	if st.Call != nil {
		s.results.Add(1)
		if _, err := os.Stat(s.shared); err == nil {
			s.settled.Add(1)
		}
	}
	return s.Host.Commit(ctx, st)
}

// TestFakeTurnEndSettlesObjects: the objects a turn's commands wrote (in
// the task's object directory) are in the repository's shared store when
// the turn's end is stored, while the CLI still runs, not only once it
// stops.
func TestFakeTurnEndSettlesObjects(t *testing.T) {
	t.Parallel()
	eng, _ := fakeEngine(t, "complete.jsonl", "object")
	repo := t.TempDir()
	common := filepath.Join(repo, ".git")
	if err := os.MkdirAll(filepath.Join(common, "objects", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	tk := task.Task{ID: "t-settle1", Description: "hello task", Repo: repo}
	own, err := sandbox.ProvideObjects(common, string(tk.ID))
	if err != nil {
		t.Fatal(err)
	}
	eng.o.Launcher = &sandbox.Launcher{BranchDir: "neuraphage", Status: sandbox.Status{Off: true}}
	name, _ := blobObject()
	h := &settleHost{Host: enginetest.NewHost(tk), shared: filepath.Join(common, "objects", name[:2], name[2:])}
	o := eng.Run(context.Background(), engine.Run{Task: tk, Dir: repo, Branch: "neuraphage/t-settle1/work", Host: h})
	if o.Status != engine.Completed {
		t.Fatalf("outcome = %+v", o)
	}
	if h.results.Load() == 0 {
		t.Fatal("no turn's result was stored")
	}
	if h.settled.Load() != h.results.Load() {
		t.Errorf("the object was in the shared store at %d of %d turn ends; want all", h.settled.Load(), h.results.Load())
	}
	if _, err := os.Stat(filepath.Join(own, name[:2], name[2:])); err == nil {
		t.Errorf("the object is still in the task's object directory %s", own)
	}
}
