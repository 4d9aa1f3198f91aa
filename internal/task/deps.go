package task

// Readiness says whether a queued task may be dispatched given its blockers.
type Readiness string

// The readiness values.
const (
	// Ready: every blocker completed (or there are none).
	Ready Readiness = "ready"
	// Blocked: some blocker has not finished yet.
	Blocked Readiness = "blocked"
	// Stranded: some blocker failed or was cancelled, so the task cannot become
	// ready without the user's help (remove the dependency or cancel the task).
	Stranded Readiness = "stranded"
)

// ReadinessOf judges a task from the statuses of its blockers.
func ReadinessOf(blockers []Status) Readiness {
	r := Ready
	for _, s := range blockers {
		switch s {
		case Completed:
		case Failed, Cancelled:
			return Stranded
		default:
			r = Blocked
		}
	}
	return r
}

// Dependency says that Task may not start before Blocker completes.
type Dependency struct {
	Task    ID `json:"task"`
	Blocker ID `json:"blocker"`
}

// FindCycle reports whether adding the edge task→blocker to the graph given by
// blockersOf would create a cycle, and returns the path from blocker back to task
// when it would. blockersOf returns the direct blockers of a task.
func FindCycle(task, blocker ID, blockersOf func(ID) []ID) ([]ID, bool) {
	if task == blocker {
		return []ID{task}, true
	}
	// Depth-first from blocker, looking for task.
	seen := map[ID]bool{}
	var path []ID
	var visit func(ID) bool
	visit = func(n ID) bool {
		if n == task {
			path = append(path, n)
			return true
		}
		if seen[n] {
			return false
		}
		seen[n] = true
		path = append(path, n)
		for _, b := range blockersOf(n) {
			if visit(b) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if visit(blocker) {
		return path, true
	}
	return nil, false
}
