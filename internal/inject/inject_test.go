package inject

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/neuraphage/neuraphage-go/internal/task"
)

func TestParseKind(t *testing.T) {
	t.Parallel()
	if k, err := ParseKind(""); err != nil || k != Message {
		t.Errorf(`ParseKind("") = %v, %v`, k, err)
	}
	for _, k := range Kinds() {
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k, got, err)
		}
	}
	if _, err := ParseKind("shout"); err == nil || !strings.Contains(err.Error(), "nudge") {
		t.Errorf("ParseKind(shout) = %v, want an error listing the kinds", err)
	}
}

// The typed fields travel as the attributes they were; everything else in
// the map is left as it is.
func TestParseAttrsAndAttrMap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		attrs map[string]string
		want  Injection
	}{
		{"none", nil, Injection{}},
		{"empty", map[string]string{}, Injection{}},
		{"free-form only", map[string]string{"severity": "hint"}, Injection{Attrs: map[string]string{"severity": "hint"}}},
		{"blocking request", map[string]string{"urgency": "blocking", "main": "main"},
			Injection{Urgency: Blocking, Attrs: map[string]string{"main": "main"}}},
		{"outcome", map[string]string{"urgency": "blocking", "outcome": "up_to_date"}, Injection{Urgency: Blocking, Outcome: UpToDate}},
		{"unknown value kept", map[string]string{"urgency": "someday"}, Injection{Urgency: "someday"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Injection
			got.ParseAttrs(tt.attrs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseAttrs (-want +got):\n%s", diff)
			}
			back := got.AttrMap()
			if len(tt.attrs) == 0 {
				if back != nil {
					t.Errorf("AttrMap = %v, want nil", back)
				}
				return
			}
			if !maps.Equal(back, tt.attrs) {
				t.Errorf("AttrMap = %v, want %v", back, tt.attrs)
			}
		})
	}
}

func TestRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		inj             Injection
		rebase, persona bool
	}{
		{Injection{Kind: Rebase, Urgency: Blocking}, true, false},
		{Injection{Kind: Rebase, Urgency: Blocking, Outcome: Conflict}, false, false},
		{Injection{Kind: Rebase, Urgency: Helpful}, false, false},
		{Injection{Kind: Rebase, Urgency: Blocking, Outcome: "later"}, false, false},
		{Injection{Kind: Persona}, false, true},
		{Injection{Kind: Persona, Outcome: Done}, false, false},
		{Injection{Kind: Message, Urgency: Blocking}, false, false},
	}
	for _, tt := range tests {
		if got := tt.inj.IsBlockingRebase(); got != tt.rebase {
			t.Errorf("%+v IsBlockingRebase = %v", tt.inj, got)
		}
		if got := tt.inj.IsPersonaRequest(); got != tt.persona {
			t.Errorf("%+v IsPersonaRequest = %v", tt.inj, got)
		}
	}
}

// untyped is the injection as the store sent it before its fields were
// typed (store.Injection): the JSON shape MarshalJSON must keep.
type untyped struct {
	ID          int64             `json:"id"`
	TaskID      task.ID           `json:"task_id"`
	Source      string            `json:"source"`
	Kind        string            `json:"kind"`
	Attrs       map[string]string `json:"attrs,omitempty"`
	Text        string            `json:"text"`
	Urgent      bool              `json:"urgent,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
	DeliveredAt *time.Time        `json:"delivered_at,omitempty"`
}

func TestJSONKeepsTheUntypedShape(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	tests := []struct {
		typed Injection
		old   untyped
	}{
		{Injection{ID: 1, TaskID: "t-aaaaa", Kind: Message, Source: FromUser, Text: "hi", CreatedAt: t0},
			untyped{ID: 1, TaskID: "t-aaaaa", Kind: "message", Source: "user", Text: "hi", CreatedAt: t0}},
		{Injection{ID: 2, TaskID: "t-aaaaa", Kind: Rebase, Source: FromMainWatcher, Urgency: Blocking, Outcome: Conflict,
			Attrs: map[string]string{"main": "main"}, Text: "conflicts", Urgent: true, Quiet: true, CreatedAt: t0, DeliveredAt: &t1},
			untyped{ID: 2, TaskID: "t-aaaaa", Kind: "rebase", Source: "main-watcher", Attrs: map[string]string{"main": "main", "urgency": "blocking", "outcome": "conflict"},
				Text: "conflicts", Urgent: true, CreatedAt: t0, DeliveredAt: &t1}},
		{Injection{ID: 3, TaskID: "t-aaaaa", Kind: Sync, Source: FromTask("t-bbbbb"), Urgency: FYI, Text: "fyi", CreatedAt: t0},
			untyped{ID: 3, TaskID: "t-aaaaa", Kind: "sync", Source: "t-bbbbb", Attrs: map[string]string{"urgency": "fyi"}, Text: "fyi", CreatedAt: t0}},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.typed)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(tt.old)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("Marshal =\n%s\nwant\n%s", got, want)
		}
		var back Injection
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatal(err)
		}
		tt.typed.Quiet = false // a wish for the door, not part of the shape
		if diff := cmp.Diff(tt.typed, back); diff != "" {
			t.Errorf("Unmarshal (-want +got):\n%s", diff)
		}
	}
	var inj Injection
	if err := json.Unmarshal([]byte(`{"id":4,"kind":"shout"}`), &inj); err == nil || !strings.Contains(err.Error(), "shout") {
		t.Errorf("Unmarshal of an unknown kind = %v, want an error", err)
	}
	if err := json.Unmarshal([]byte(`{"id":5,"kind":""}`), &inj); err != nil || inj.Kind != Message {
		t.Errorf(`Unmarshal of kind "" = %+v, %v; want a message`, inj, err)
	}
}

// FuzzUnmarshal: whatever a stored or sent injection holds, decoding it
// either fails or gives an injection that encodes to the same attributes
// and decodes to itself again.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"task_id":"t-aaaaa","source":"user","kind":"message","text":"hi","created_at":"2026-11-21T09:00:00Z"}`,
		`{"id":2,"kind":"rebase","attrs":{"urgency":"blocking","main":"main"},"urgent":true}`,
		`{"kind":"persona","attrs":{"from":"a","to":"b","outcome":"done"}}`,
		`{"kind":"sync","attrs":{"urgency":"","outcome":""}}`,
		`{"kind":"nope"}`, `[]`, `{"attrs":{"urgency":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var inj Injection
		if err := json.Unmarshal(b, &inj); err != nil {
			return
		}
		if _, err := ParseKind(string(inj.Kind)); err != nil {
			t.Fatalf("decoded an unknown kind %q", inj.Kind)
		}
		if _, ok := inj.Attrs["urgency"]; ok {
			t.Fatalf("urgency left among the free-form attributes: %v", inj.Attrs)
		}
		if _, ok := inj.Attrs["outcome"]; ok {
			t.Fatalf("outcome left among the free-form attributes: %v", inj.Attrs)
		}
		out, err := json.Marshal(inj)
		if err != nil {
			t.Fatal(err)
		}
		var again Injection
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		if !maps.Equal(inj.AttrMap(), again.AttrMap()) || inj.Urgency != again.Urgency || inj.Outcome != again.Outcome || inj.Kind != again.Kind {
			t.Fatalf("round trip changed the injection:\n%+v\n%+v", inj, again)
		}
	})
}

// FuzzParseAttrs: splitting a stored attribute map and joining it again
// gives the map back, "urgency" and "outcome" included, whatever they hold.
func FuzzParseAttrs(f *testing.F) {
	f.Add("urgency", "blocking", "main", "main")
	f.Add("outcome", "", "urgency", "")
	f.Add("severity", "hint", "from", "t-aaaaa")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		m := map[string]string{k1: v1, k2: v2}
		var inj Injection
		inj.ParseAttrs(m)
		back := inj.AttrMap()
		// An empty urgency or outcome is "not said": it is not written back.
		want := maps.Clone(m)
		for _, k := range []string{"urgency", "outcome"} {
			if v, ok := want[k]; ok && v == "" {
				delete(want, k)
			}
		}
		if len(want) == 0 {
			want = nil
		}
		if !maps.Equal(back, want) {
			t.Fatalf("ParseAttrs then AttrMap of %v = %v", m, back)
		}
	})
}

// What the user sent, a pause and anything urgent hold a task's end back;
// the machinery's notices do not.
func TestHoldsEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		inj  Injection
		want bool
	}{
		{Injection{Kind: Message, Source: FromUser}, true},
		{Injection{Kind: Message}, true},
		{Injection{Kind: Nudge, Source: FromUser}, true},
		{Injection{Kind: Pause, Source: FromWatcher}, true},
		{Injection{Kind: Interjection, Source: FromWatcher, Urgent: true}, true},
		{Injection{Kind: Nudge, Source: FromWatcher}, false},
		{Injection{Kind: Sync, Source: FromSyncer}, false},
		{Injection{Kind: Rebase, Source: FromMainWatcher, Urgency: Helpful}, false},
	} {
		if got := tc.inj.HoldsEnd(); got != tc.want {
			t.Errorf("%s from %q (urgent %v): HoldsEnd = %v, want %v", tc.inj.Kind, tc.inj.Source, tc.inj.Urgent, got, tc.want)
		}
	}
}
