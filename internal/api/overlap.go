package api

// OverlapPair is one entry of GET /v1/overlap: two running tasks that
// changed the same files, and the forecast of merging their work
// (pending, clean, conflict or unknown).
type OverlapPair struct {
	A         string   `json:"a"`
	B         string   `json:"b"`
	Files     []string `json:"files"`
	Forecast  string   `json:"forecast"`
	Conflicts []string `json:"conflicts,omitempty"`
}
