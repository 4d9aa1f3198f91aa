package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// fullTasks answers every send as a store on a full disk does.
type fullTasks struct{ *fakeTasks }

func (fullTasks) Send(context.Context, task.ID, string, bool) (inject.Injection, error) {
	return inject.Injection{}, fmt.Errorf("queueing a message for t-4k2x9: database or disk is full (13) (%w)", store.ErrFull)
}

// A request refused by a full data disk is "unavailable", with what to do,
// not an internal error.
func TestFullDiskIsUnavailable(t *testing.T) {
	t.Parallel()
	c := serve(t, fullTasks{newFake()})
	_, err := c.SendMessage(context.Background(), "4k2", api.SendRequest{Text: "hello"})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code() != api.CodeUnavailable || !strings.Contains(ce.Body.Hint, "free space on the data disk") {
		t.Fatalf("send on a full disk: error = %#v, want unavailable with a hint", err)
	}
}
