package interject

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply string
		want  Reply
	}{
		{"valid block", "[INTERJECT]\nurgent: false\ncontent: Use a parameterized query.\n[/INTERJECT]",
			Reply{Decision: Interject, Content: "Use a parameterized query."}},
		{"urgent true", "Looking at this.\n[INTERJECT]\nurgent: true\ncontent: Stop: SQL injection in auth.go.\n[/INTERJECT]",
			Reply{Decision: Interject, Urgent: true, Content: "Stop: SQL injection in auth.go."}},
		{"urgent false", "[INTERJECT]\nurgent: false\ncontent: consider a test\n[/INTERJECT]",
			Reply{Decision: Interject, Content: "consider a test"}},
		{"urgent in other case and spacing", "[ interject ]\n  Urgent :  TRUE \ncontent: now\n[/Interject]",
			Reply{Decision: Interject, Urgent: true, Content: "now"}},
		{"urgent not a boolean", "[INTERJECT]\nurgent: very\ncontent: x\n[/INTERJECT]",
			Reply{Decision: Interject, Content: "x"}},
		{"urgent missing", "[INTERJECT]\ncontent: x\n[/INTERJECT]", Reply{Decision: Interject, Content: "x"}},
		{"multi-line content", "[INTERJECT]\nurgent: true\ncontent: Two problems:\n1. the query\n2. the log line\n\nFix both.\n[/INTERJECT]",
			Reply{Decision: Interject, Urgent: true, Content: "Two problems:\n1. the query\n2. the log line\n\nFix both."}},
		{"content mentions urgent", "[INTERJECT]\nurgent: false\ncontent: not urgent:\nurgent: true is what I'd say otherwise\n[/INTERJECT]",
			Reply{Decision: Interject, Content: "not urgent:\nurgent: true is what I'd say otherwise"}},
		{"continue block", "[CONTINUE]\nThe change adds a README line.\n[/CONTINUE]",
			Reply{Decision: Continue, Note: "The change adds a README line."}},
		{"continue unclosed", "[CONTINUE] all fine", Reply{Decision: Continue, Note: "all fine"}},
		{"malformed: unclosed", "[INTERJECT]\nurgent: true\ncontent: stop",
			Reply{Decision: Continue, Note: "malformed reply: [INTERJECT] not closed by [/INTERJECT]; nothing sent"}},
		{"malformed: no content", "[INTERJECT]\nurgent: true\nstop now\n[/INTERJECT]",
			Reply{Decision: Continue, Note: "malformed reply: [INTERJECT] without content:; nothing sent"}},
		{"empty content", "[INTERJECT]\nurgent: true\ncontent:   \n[/INTERJECT]",
			Reply{Decision: Continue, Note: "empty interjection; nothing sent"}},
		{"no block", "Nothing to flag here.", Reply{Decision: Continue, Note: "Nothing to flag here."}},
		{"empty reply", "", Reply{Decision: Continue}},
		{"several blocks: the first decides", "[CONTINUE]ok[/CONTINUE]\n[INTERJECT]\nurgent: true\ncontent: x\n[/INTERJECT]",
			Reply{Decision: Continue, Note: "ok"}},
		{"two interjections: the first", "[INTERJECT]\nurgent: false\ncontent: one\n[/INTERJECT][INTERJECT]\nurgent: true\ncontent: two\n[/INTERJECT]",
			Reply{Decision: Interject, Content: "one"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Parse(tc.reply); got != tc.want {
				t.Errorf("Parse(%q)\n got %+v\nwant %+v", tc.reply, got, tc.want)
			}
		})
	}
}

func TestParseClipsLongNotes(t *testing.T) {
	t.Parallel()
	got := Parse(strings.Repeat("é", 1000))
	if len(got.Note) > maxNote+len("…") || !utf8.ValidString(got.Note) {
		t.Errorf("note of %d bytes (valid %v), want at most %d", len(got.Note), utf8.ValidString(got.Note), maxNote)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"[INTERJECT]\nurgent: true\ncontent: x\n[/INTERJECT]",
		"[CONTINUE]fine[/CONTINUE]",
		"[INTERJECT]content:[/INTERJECT]",
		"[interject]\nurgent:true\ncontent:\n\n[/interject][continue]",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		r := Parse(reply)
		switch r.Decision {
		case Interject:
			if strings.TrimSpace(r.Content) == "" || r.Content != strings.TrimSpace(r.Content) {
				t.Fatalf("interjection with content %q", r.Content)
			}
			if !opening.MatchString(reply) || !closeI.MatchString(reply) {
				t.Fatalf("interjection from a reply without a whole block: %q", reply)
			}
			if r.Note != "" {
				t.Fatalf("interjection with a note")
			}
		case Continue:
			if r.Urgent || r.Content != "" {
				t.Fatalf("continue with urgent %v, content %q", r.Urgent, r.Content)
			}
		default:
			t.Fatalf("decision %q", r.Decision)
		}
		if utf8.ValidString(reply) && !utf8.ValidString(r.Note) {
			t.Fatalf("note %q is not valid UTF-8", r.Note)
		}
	})
}
