package codex

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/engine/extproc"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// rollout is what the CLI stored of the thread (its rollout files under
// CODEX_HOME/sessions), where delivery markers of messages it took are.
func (ru *run) rollout() string {
	var b strings.Builder
	root := filepath.Join(ru.e.Home(ru.r.Task.ID), "sessions")
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), ru.thread) {
			if data, err := os.ReadFile(path); err == nil {
				b.Write(data)
			}
		}
		return nil
	})
	return b.String()
}

// taskPrompt is the first turn of a new thread.
func taskPrompt(t task.Task) string { return extproc.TaskPrompt(t) + "\n\n" + engine.LearningNote }
