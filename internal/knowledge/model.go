package knowledge

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// ModelPrompt is the system prompt of the turn-end model pass. The user
// message is a TurnDigest; the reply is read by ParseModelLearnings.
const ModelPrompt = `You read the transcript of one turn of a coding agent working in a software repository, and pick out what is worth remembering for other engineers working in the same repository.

A learning is a durable, reusable fact that someone else would want before starting their own task here:
- where things are (which file or package holds some behaviour, where tests or fixtures live);
- constraints and conventions the code enforces;
- gotchas: errors that look like one thing and are another, and what fixed them;
- commands that work (how to build, test, lint or run a part of the project), and ones that do not.

Not learnings: progress reports ("I edited X", "tests pass now"), plans, guesses, facts about this task only, and anything everyone knows about the language or tools in general. When in doubt, leave it out: most turns have nothing worth keeping.

Reply with one JSON object and nothing else:
{"learnings": [{"summary": "one sentence, at most 200 characters", "detail": "optional: evidence, context and how to apply it", "tags": ["a few lowercase keywords"], "files": ["repository-relative paths it is about"]}]}
At most 5 learnings, at most 8 tags each. When nothing qualifies, reply {"learnings": []}.`

// Limits of a model reply.
const (
	maxModelLearnings = 5
	maxModelSummary   = 300 // longer is an error; longer than maxSummary is clipped
	maxTags           = 8
	maxTagLen         = 32
	maxFiles          = 20
)

type modelReply struct {
	Learnings *[]modelLearning `json:"learnings"`
}

type modelLearning struct {
	Summary string   `json:"summary"`
	Detail  string   `json:"detail"`
	Tags    []string `json:"tags"`
	Files   []string `json:"files"`
}

// ParseModelLearnings reads the reply of the turn-end model pass: one JSON
// object {"learnings": [{"summary", "detail", "tags", "files"}]}, alone or
// in a ```json fence. Each summary is required and at most 300 characters
// (clipped to 200 with "…"); details are clipped to 1000 characters; tags
// are lowercased, each at most 32 characters, at most 8; files lose a
// leading "./". More than 5 learnings, or anything else malformed, is an
// error. The candidates are of Kind Model, with Turn 0 for the caller to
// set.
func ParseModelLearnings(reply string) ([]Candidate, error) {
	var r modelReply
	if err := llm.DecodeObject(reply, &r); err != nil {
		return nil, fmt.Errorf("reading the model's learnings: %w", err)
	}
	if r.Learnings == nil {
		return nil, errors.New(`reading the model's learnings: the reply has no "learnings" list`)
	}
	ls := *r.Learnings
	if len(ls) > maxModelLearnings {
		return nil, fmt.Errorf("reading the model's learnings: %d learnings, at most %d allowed", len(ls), maxModelLearnings)
	}
	out := make([]Candidate, 0, len(ls))
	for i, l := range ls {
		c, err := modelCandidate(l)
		if err != nil {
			return nil, fmt.Errorf("reading the model's learning %d: %w", i+1, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func modelCandidate(l modelLearning) (Candidate, error) {
	sum := words.OneLine(l.Summary)
	switch n := utf8.RuneCountInString(sum); {
	case n == 0:
		return Candidate{}, errors.New("the summary is empty")
	case n > maxModelSummary:
		return Candidate{}, fmt.Errorf("the summary has %d characters, at most %d allowed", n, maxModelSummary)
	}
	if len(l.Tags) > maxTags {
		return Candidate{}, fmt.Errorf("%d tags, at most %d allowed", len(l.Tags), maxTags)
	}
	var tags []string
	for _, t := range l.Tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if n := utf8.RuneCountInString(t); n > maxTagLen {
			return Candidate{}, fmt.Errorf("the tag %q has %d characters, at most %d allowed", words.Clip(t, 39), n, maxTagLen)
		}
		if t != "" && !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	var files []string
	for _, f := range l.Files {
		f = strings.TrimPrefix(strings.TrimSpace(f), "./")
		if f != "" && !slices.Contains(files, f) && len(files) < maxFiles {
			files = append(files, f)
		}
	}
	return Candidate{
		Kind:    Model,
		Summary: words.Clip(sum, maxSummary-1),
		Detail:  words.Clip(strings.TrimSpace(l.Detail), maxDetail-1),
		Tags:    tags,
		Files:   files,
	}, nil
}
