package task

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// HeadlineLen is the most runes Summary.Description keeps.
const HeadlineLen = 120

// Summary is what a listing shows of a task: the fields the store keeps as
// columns beside the task's JSON, so that listing thousands of tasks decodes
// none of it. Its JSON field names are Task's.
type Summary struct {
	ID ID `json:"id"`
	// Description is the task's Headline: its description on one line,
	// cut to HeadlineLen runes.
	Description string `json:"description"`
	Priority    int    `json:"priority"`
	ParentID    ID     `json:"parent_id,omitempty"`
	Persona     string `json:"persona,omitempty"`
	Engine      string `json:"engine,omitempty"`
	Model       string `json:"model,omitempty"`

	Status        Status `json:"status"`
	ResumePending bool   `json:"resume_pending,omitempty"`
	CloseReason   string `json:"close_reason,omitempty"`

	Usage Usage `json:"usage"`

	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// Summarize returns t's summary.
func (t Task) Summarize() Summary {
	return Summary{
		ID:            t.ID,
		Description:   Headline(t.Description),
		Priority:      t.Priority,
		ParentID:      t.ParentID,
		Persona:       t.Persona,
		Engine:        t.Engine,
		Model:         t.Model,
		Status:        t.Status,
		ResumePending: t.ResumePending,
		CloseReason:   t.CloseReason,
		Usage:         t.Usage,
		CreatedAt:     t.CreatedAt,
		UpdatedAt:     t.UpdatedAt,
		StartedAt:     t.StartedAt,
		FinishedAt:    t.FinishedAt,
	}
}

// Headline returns a description on one line: every run of white space
// (line breaks included) one space, none at either end, cut to HeadlineLen
// runes. Invalid UTF-8 reads as U+FFFD, one per byte, as JSON stores it.
func Headline(desc string) string {
	var b strings.Builder
	n, space := 0, false
	for _, r := range desc {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if n == HeadlineLen {
			break
		}
		if space {
			if n+1 == HeadlineLen {
				break
			}
			b.WriteByte(' ')
			n++
			space = false
		}
		if r == utf8.RuneError {
			b.WriteString("\uFFFD")
		} else {
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}
