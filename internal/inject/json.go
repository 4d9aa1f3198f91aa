package inject

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

// stored is an injection's JSON shape, the one it had before its fields
// were typed: kind by name, urgency and outcome among the attributes. The
// Quiet wish is not part of it.
type stored struct {
	ID          int64             `json:"id"`
	TaskID      task.ID           `json:"task_id"`
	Source      string            `json:"source"`
	Kind        string            `json:"kind"`
	Attrs       map[string]string `json:"attrs,omitempty"`
	Text        string            `json:"text"`
	Urgent      bool              `json:"urgent,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
	DeliveredAt *time.Time        `json:"delivered_at,omitempty"`
	ReturnedAt  *time.Time        `json:"returned_at,omitempty"`
}

// MarshalJSON encodes inj in its stored shape (see the package doc).
func (inj Injection) MarshalJSON() ([]byte, error) {
	return json.Marshal(stored{ID: inj.ID, TaskID: inj.TaskID, Source: string(inj.Source), Kind: string(inj.Kind),
		Attrs: inj.AttrMap(), Text: inj.Text, Urgent: inj.Urgent, CreatedAt: inj.CreatedAt, DeliveredAt: inj.DeliveredAt, ReturnedAt: inj.ReturnedAt})
}

// UnmarshalJSON decodes the stored shape, parsing the kind and the typed
// attributes. An unknown kind is an error.
func (inj *Injection) UnmarshalJSON(b []byte) error {
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	k, err := ParseKind(s.Kind)
	if err != nil {
		return fmt.Errorf("decoding injection %d: %w", s.ID, err)
	}
	*inj = Injection{ID: s.ID, TaskID: s.TaskID, Source: Source(s.Source), Kind: k, Text: s.Text, Urgent: s.Urgent,
		CreatedAt: s.CreatedAt, DeliveredAt: s.DeliveredAt, ReturnedAt: s.ReturnedAt}
	inj.ParseAttrs(s.Attrs)
	return nil
}
