package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
)

// hostileDescriptions are task texts that try to break a listing passed
// through undecoded: JSON and framing look-alikes, escapes, invalid UTF-8,
// line separators, terminal sequences, HTML and a long text.
var hostileDescriptions = []string{
	`plain task`,
	"\n]}\n{\"id\":\"t-forged\"},\n",
	`],"next":"t-zzzzz"}`,
	`{"tasks":[`,
	`quote " backslash \ slash / tab` + "\t" + `end`,
	"line one\nline two\r\nline three",
	"separators \u2028 and \u2029 and NEL \u0085",
	"invalid utf-8 \xff\xfe and a cut rune \xe6\x97",
	"terminal \x1b[2J\x1b]0;pwned\x07 \u009b31m \u202eright-to-left",
	`<script>alert("x")</script> & </tasks>`,
	"emoji 🧪 and CJK 日本語 and combining e\u0301",
	strings.Repeat("long ", 400),
}

// TestListingPassThroughKeepsTheShape lists hostile task texts through a real
// daemon: what `ps --json` prints (the daemon's bytes, framing checked, never
// decoded) must be, line for line, the encoding of the task summaries that
// decoding the same listing gives: the documented snake_case shape, nothing
// more, nothing less.
func TestListingPassThroughKeepsTheShape(t *testing.T) {
	t.Parallel()
	r := start(t, shortTemp(t))
	ctx := context.Background()
	for _, d := range hostileDescriptions {
		if _, err := r.client.CreateTask(ctx, api.CreateTaskRequest{Description: d, NoStart: true}); err != nil {
			t.Fatalf("creating %q: %v", d, err)
		}
	}
	queries := []client.ListQuery{{All: true}, {All: true, Limit: 5}}
	for i := 0; i < len(queries); i++ {
		q := queries[i]
		var out bytes.Buffer
		if err := r.client.WriteListJSON(ctx, q, &out); err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		page, err := r.client.ListPage(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if want := len(hostileDescriptions); q.Limit == 0 && len(page.Tasks) != want {
			t.Fatalf("%+v: %d tasks listed, want %d", q, len(page.Tasks), want)
		}
		// What the listing must be, written from the decoded page.
		var want bytes.Buffer
		want.WriteString("{\"tasks\":[\n")
		for i, s := range page.Tasks {
			if i > 0 {
				want.WriteString(",\n")
			}
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			want.Write(b)
		}
		if len(page.Tasks) > 0 {
			want.WriteString("\n")
		}
		want.WriteString("]")
		if page.Next != "" {
			want.WriteString(`,"next":"` + string(page.Next) + `"`)
		}
		want.WriteString("}\n")
		if out.String() != want.String() {
			t.Errorf("%+v: passed through:\n%s\nre-encoded:\n%s", q, out.String(), want.String())
		}
		if !json.Valid(out.Bytes()) {
			t.Errorf("%+v: not valid JSON:\n%s", q, out.String())
		}
		if q.Limit > 0 && page.Next != "" { // and the next page
			queries = append(queries, client.ListQuery{All: true, Limit: q.Limit, After: string(page.Next)})
		}
	}
	if len(queries) != 4 { // all, then 5 + 5 + 2
		t.Errorf("%d listings, want 4 (the whole and three pages)", len(queries))
	}
}
