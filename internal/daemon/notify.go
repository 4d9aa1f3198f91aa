package daemon

import (
	"context"
	"log/slog"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/notify"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// newNotifier builds the attention signals of notify.*; a failed delivery is
// logged as a notify.failed event on the task.
func newNotifier(c config.Notify, st store.Store, log *slog.Logger) *notify.Notifier {
	log = log.With("component", "notify")
	return notify.New(notify.Options{
		Command: c.Command, Webhook: c.Webhook, Desktop: c.Desktop,
		Debounce: time.Duration(c.DebounceSecs) * time.Second,
		Timeout:  time.Duration(c.TimeoutSecs) * time.Second,
		Logger:   log,
		Report: func(id task.ID, p event.Payload) {
			if err := st.EmitEvents(context.Background(), event.New(time.Now(), id, p)); err != nil {
				log.Warn("recording an attention signal's failure", "err", err)
			}
		},
	})
}
