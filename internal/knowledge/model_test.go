package knowledge

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseModelLearnings(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 250)
	tests := []struct {
		name  string
		reply string
		want  []Candidate
	}{
		{"none", `{"learnings": []}`, []Candidate{}},
		{"fenced", "```json\n{\"learnings\": [{\"summary\": \" The API server reads PORT, not HTTP_PORT. \", \"tags\": [\"Config\", \"config\", \" \"], \"files\": [\"./cmd/api/main.go\", \"cmd/api/main.go\"]}]}\n```",
			[]Candidate{{Kind: Model, Summary: "The API server reads PORT, not HTTP_PORT.", Tags: []string{"config"}, Files: []string{"cmd/api/main.go"}}}},
		{"clipped summary and detail", `{"learnings": [{"summary": "` + long + `", "detail": "` + strings.Repeat("d", 1200) + `"}]}`,
			[]Candidate{{Kind: Model, Summary: strings.Repeat("a", 199) + "…", Detail: strings.Repeat("d", 999) + "…"}}},
		{"multi-line summary joined", `{"learnings": [{"summary": "one\ntwo"}]}`, []Candidate{{Kind: Model, Summary: "one two"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseModelLearnings(tt.reply)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("learnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseModelLearningsErrors(t *testing.T) {
	t.Parallel()
	six := `{"learnings": [` + strings.TrimSuffix(strings.Repeat(`{"summary": "x"},`, 6), ",") + `]}`
	tests := []struct {
		name, reply, want string
	}{
		{"prose", "Nothing to report.", "not a JSON object"},
		{"no list", `{"facts": []}`, `no "learnings" list`},
		{"null list", `{"learnings": null}`, `no "learnings" list`},
		{"not a list", `{"learnings": "none"}`, "not valid JSON"},
		{"empty summary", `{"learnings": [{"summary": "  "}]}`, "learning 1: the summary is empty"},
		{"summary too long", `{"learnings": [{"summary": "` + strings.Repeat("a", 301) + `"}]}`, "301 characters"},
		{"too many", six, "6 learnings"},
		{"too many tags", `{"learnings": [{"summary": "x", "tags": ["a","b","c","d","e","f","g","h","i"]}]}`, "9 tags"},
		{"long tag", `{"learnings": [{"summary": "x", "tags": ["` + strings.Repeat("t", 33) + `"]}]}`, "33 characters"},
		{"trailing text", `{"learnings": []} and more`, "more after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseModelLearnings(tt.reply)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestModelPromptAsksForJSON(t *testing.T) {
	t.Parallel()
	for _, w := range []string{`{"learnings": []}`, "summary", "tags", "files", "progress reports"} {
		if !strings.Contains(ModelPrompt, w) {
			t.Errorf("ModelPrompt does not mention %q", w)
		}
	}
}
