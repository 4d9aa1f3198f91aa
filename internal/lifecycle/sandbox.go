package lifecycle

import (
	"path/filepath"
	"slices"

	"github.com/neuraphage/neuraphage-go/internal/sandbox"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// NarrowSandbox maps manifest m onto base, the sandbox policy of a command
// of the task whose worktree is dir (sandbox.Launcher.Policy), given the
// user's extra writable paths userWrite (sandbox.write): it returns a
// policy that grants no more than base.
//
//   - The worktree is writable where m says: all of it for ".", else only
//     m's relative writable paths within it (none, for a manifest that
//     writes nothing).
//   - A path of userWrite is writable only as far as m's absolute writable
//     paths reach into it.
//   - What the task needs to run at all stays: its temporary directory,
//     the devices, the git directories its commits need.
//   - Reads and the network are base's: reading is everything but the
//     denied paths whatever m says (m's readable list reaches the CLI's
//     flags, not Landlock, which cannot deny "everything but").
//
// sandbox.Task.Narrow takes this function (with m, dir and userWrite
// bound), and the launcher keeps its result within base again.
func NarrowSandbox(base sandbox.Policy, m task.Manifest, dir string, userWrite []string) sandbox.Policy {
	out := base
	out.Write = nil
	dir = filepath.Clean(dir)
	for _, w := range base.Write {
		cw := filepath.Clean(w)
		switch {
		case cw == dir:
			for _, mw := range m.Writable {
				if filepath.IsAbs(mw) {
					continue
				}
				out.Write = appendNew(out.Write, filepath.Join(dir, mw))
			}
		case slices.ContainsFunc(userWrite, func(u string) bool { return filepath.Clean(u) == cw }):
			for _, mw := range m.Writable {
				if filepath.IsAbs(mw) && under(filepath.Clean(mw), cw) {
					out.Write = appendNew(out.Write, filepath.Clean(mw))
				}
			}
		default:
			out.Write = appendNew(out.Write, w)
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
