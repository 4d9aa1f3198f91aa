package event

// The overlap radar's kinds (internal/overlap).
const (
	KindOverlapFound    Kind = "overlap.found"
	KindOverlapNotice   Kind = "overlap.notice"
	KindOverlapForecast Kind = "overlap.forecast"
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
