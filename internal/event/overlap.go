package event

// The overlap radar's kinds (internal/overlap).
const (
	KindOverlapFound    Kind = "overlap.found"
	KindOverlapNotice   Kind = "overlap.notice"
	KindOverlapForecast Kind = "overlap.forecast"
	// The merge queue's use of overlaps (internal/merge).
	KindMergeOrdered Kind = "merge.ordered"
	KindMergeYielded Kind = "merge.yielded"
)

// OverlapFound: two running tasks changed the same files. TaskID is the
// task whose change made the overlap; Other the task it overlaps with.
type OverlapFound struct {
	Other string   `json:"other"`
	Files []string `json:"files"`
}

// EventKind implements Payload.
func (OverlapFound) EventKind() Kind { return KindOverlapFound }

// OverlapNotice: the task (TaskID) was told it overlaps Other, at Urgency,
// with the forecast of merging the two ("clean", "conflict" or
// "unknown").
type OverlapNotice struct {
	Other    string   `json:"other"`
	Files    []string `json:"files"`
	Urgency  string   `json:"urgency"`
	Forecast string   `json:"forecast"`
	// Injection is the queued notice's id.
	Injection int64 `json:"injection,omitempty"`
}

// EventKind implements Payload.
func (OverlapNotice) EventKind() Kind { return KindOverlapNotice }

// OverlapForecast: the forecast of merging the task's work (TaskID) with
// Other's changed From → To; Conflicts are the files git merge-tree
// reports conflicting.
type OverlapForecast struct {
	Other     string   `json:"other"`
	From      string   `json:"from,omitempty"`
	To        string   `json:"to"`
	Conflicts []string `json:"conflicts,omitempty"`
}

// EventKind implements Payload.
func (OverlapForecast) EventKind() Kind { return KindOverlapForecast }

// MergeOrdered: the merge queue put the task's entry (Entry, Lines lines
// changed in its branch) after After's smaller entry (AfterEntry,
// AfterLines) queued later, because both change Files: the smaller lands
// first.
type MergeOrdered struct {
	Entry      int64    `json:"entry"`
	Target     string   `json:"target"`
	After      string   `json:"after"`
	AfterEntry int64    `json:"after_entry"`
	Files      []string `json:"files"`
	Lines      int      `json:"lines"`
	AfterLines int      `json:"after_lines"`
}

// EventKind implements Payload.
func (MergeOrdered) EventKind() Kind { return KindMergeOrdered }

// MergeYielded: the entry, ordered after After's smaller overlapping one,
// conflicts with Target once that landed (in Conflicts); instead of being
// sent back as a failure its task was told to rebase (Notice: by the main
// watcher) and runs again.
type MergeYielded struct {
	Entry     int64    `json:"entry"`
	Target    string   `json:"target"`
	After     string   `json:"after"`
	Conflicts []string `json:"conflicts"`
	// Notice says who told the task: "main_watcher" or "merge_queue".
	Notice string `json:"notice"`
}

// EventKind implements Payload.
func (MergeYielded) EventKind() Kind { return KindMergeYielded }
