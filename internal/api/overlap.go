package api

import "strings"

// OverlapPair is one entry of GET /v1/overlap: two running tasks that
// changed the same files, and the forecast of merging their work
// (pending, clean, conflict or unknown).
type OverlapPair struct {
	A         string   `json:"a"`
	B         string   `json:"b"`
	Files     []string `json:"files"`
	Forecast  string   `json:"forecast"`
	Conflicts []string `json:"conflicts,omitempty"`
	// Lines are where A and B changed each shared file, in lines of their
	// merge base, from the last forecast; absent while none ran.
	Lines []OverlapLines `json:"lines,omitempty"`
}

// OverlapLines is where the two tasks of a pair changed one shared file:
// ranges of lines of their merge base (from, to inclusive), and whether a
// range of one intersects or adjoins one of the other.
type OverlapLines struct {
	File      string      `json:"file"`
	A         []LineRange `json:"a"`
	B         []LineRange `json:"b"`
	Intersect bool        `json:"intersect"`
}

// LineRange is lines From to To; lines inserted between lines n and n+1
// (changing none) are From n+1 To n.
type LineRange struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// LinesSummary says where the pair's line ranges meet: "lines intersect in
// a.go", "changed lines apart", or "" when they are not known.
func (p OverlapPair) LinesSummary() string {
	if len(p.Lines) == 0 {
		return ""
	}
	var in []string
	for _, l := range p.Lines {
		if l.Intersect {
			in = append(in, l.File)
		}
	}
	if len(in) == 0 {
		return "changed lines apart"
	}
	return "lines intersect in " + strings.Join(in, ", ")
}
