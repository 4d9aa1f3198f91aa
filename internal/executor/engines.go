package executor

import "slices"

func (e *Executor) engineNames() []string {
	names := make([]string, 0, len(e.engines))
	for n := range e.engines {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Engines returns the names of the engines tasks may name, sorted.
func (e *Executor) Engines() []string { return e.engineNames() }

// EngineStatus is one engine's readiness: nil, or what to set up.
type EngineStatus struct {
	Name string
	Err  error
}

// EngineStatuses asks every engine whether it is ready, in name order.
func (e *Executor) EngineStatuses() []EngineStatus {
	var out []EngineStatus
	for _, n := range e.engineNames() {
		out = append(out, EngineStatus{Name: n, Err: e.engines[n].Ready()})
	}
	return out
}

// EngineReady is the named engine's Ready (nil for an engine it does not
// know: Engines says which it knows).
func (e *Executor) EngineReady(name string) error {
	if en, ok := e.engines[name]; ok {
		return en.Ready()
	}
	return nil
}
