package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
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

func receipt(turn int, injs []inject.Injection, now time.Time) event.Delivered {
	d := event.Delivered{Turn: turn}
	for _, inj := range injs {
		d.InjectionIDs = append(d.InjectionIDs, inj.ID)
		d.Kinds = append(d.Kinds, string(inj.Kind))
		d.LatencyMs = append(d.LatencyMs, max(0, now.Sub(inj.CreatedAt).Milliseconds()))
	}
	return d
}

func drain(c <-chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// marker is the delivery marker of a message carrying injs: found in the
// thread's rollout, it says the CLI took them. It holds no character a
// JSON encoder escapes.
func marker(injs []inject.Injection) string {
	ids := make([]string, len(injs))
	for i, inj := range injs {
		ids[i] = strconv.FormatInt(inj.ID, 10)
	}
	return "[neuraphage-delivery:" + strings.Join(ids, ",") + "]"
}

// delivered reports whether text holds a delivery marker naming
// injection id.
func delivered(text string, id int64) bool {
	want := strconv.FormatInt(id, 10)
	for rest := text; ; {
		_, after, ok := strings.Cut(rest, "[neuraphage-delivery:")
		if !ok {
			return false
		}
		ids, tail, ok := strings.Cut(after, "]")
		if !ok {
			return false
		}
		if slices.Contains(strings.Split(ids, ","), want) {
			return true
		}
		rest = tail
	}
}

// taskPrompt is the first turn of a new thread.
func taskPrompt(t task.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your task (%s):\n\n%s\n", t.ID, engine.Neutralize(t.Description))
	if strings.TrimSpace(t.Context) != "" {
		fmt.Fprintf(&b, "\nContext:\n\n%s\n", engine.Neutralize(t.Context))
	}
	b.WriteString("\nWork in the current directory (a git worktree of your own). When the task is done, reply with a short summary of what you did and stop.\n\n" + engine.LearningNote)
	return b.String()
}
