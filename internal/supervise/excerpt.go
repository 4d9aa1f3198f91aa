package supervise

import (
	"context"
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Conversations reads a task's stored conversation, for Excerpt.
type Conversations interface {
	Conversation(ctx context.Context, id task.ID, from int) ([]store.Entry, error)
	ConversationLen(ctx context.Context, id task.ID) (int, error)
}

// excerptMessages is how many of the last messages Excerpt renders, and
// excerptBytes how much of each one's text.
const (
	excerptMessages = 6
	excerptBytes    = 600
)

// Excerpt renders the last few messages of a task's conversation for tier
// 2 (Options.Excerpt): each message's role and text, clipped, and the
// tools it called. A task with no conversation, or one that cannot be
// read, gives "".
func Excerpt(ctx context.Context, st Conversations, id task.ID) string {
	n, err := st.ConversationLen(ctx, id)
	if err != nil || n == 0 {
		return ""
	}
	es, err := st.Conversation(ctx, id, max(n-excerptMessages, 0))
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, e := range es {
		text := words.Clip(strings.TrimSpace(e.Message.Text()), excerptBytes)
		for _, c := range e.Message.ToolCalls() {
			text += fmt.Sprintf(" [calls %s]", c.Name)
		}
		if text != "" {
			fmt.Fprintf(&b, "%s: %s\n", e.Message.Role, text)
		}
	}
	return b.String()
}
