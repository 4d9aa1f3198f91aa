package supervise

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// convs is a task's conversation in memory.
type convs struct {
	entries []store.Entry
	err     error
}

func (c convs) ConversationLen(context.Context, task.ID) (int, error) { return len(c.entries), c.err }

func (c convs) Conversation(_ context.Context, _ task.ID, from int) ([]store.Entry, error) {
	if c.err != nil {
		return nil, c.err
	}
	return c.entries[from:], nil
}

func TestExcerptRendersTheLastMessagesClipped(t *testing.T) {
	t.Parallel()
	var c convs
	for i := range 8 {
		c.entries = append(c.entries, store.Entry{Seq: i, Message: llm.UserText(fmt.Sprintf("message %d", i))})
	}
	long := strings.Repeat("é", 400) // 800 bytes, two per rune
	c.entries = append(c.entries, store.Entry{Seq: 8, Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		llm.TextPart(long), llm.ToolCallPart(llm.ToolCall{ID: "c1", Name: "bash", Input: []byte(`{}`)}),
	}}})
	got := Excerpt(context.Background(), c, "t-aaaaa")
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != excerptMessages {
		t.Fatalf("%d lines, want the last %d messages:\n%s", len(lines), excerptMessages, got)
	}
	if lines[0] != "user: message 3" {
		t.Errorf("first line %q, want the 6th message from the end", lines[0])
	}
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "assistant: é") || !strings.HasSuffix(last, "… [calls bash]") {
		t.Errorf("last line %q: want the assistant's text clipped, then its call", last)
	}
	if !strings.Contains(last, strings.Repeat("é", excerptBytes/2)+"…") || strings.Contains(last, "\uFFFD") {
		t.Errorf("the text is not clipped to %d bytes on a rune boundary: %q", excerptBytes, last)
	}
}

func TestExcerptOfNothing(t *testing.T) {
	t.Parallel()
	if got := Excerpt(context.Background(), convs{}, "t-aaaaa"); got != "" {
		t.Errorf("empty conversation: %q", got)
	}
	if got := Excerpt(context.Background(), convs{entries: []store.Entry{{Message: llm.UserText("x")}}, err: errors.New("closed")}, "t-aaaaa"); got != "" {
		t.Errorf("unreadable conversation: %q", got)
	}
}
