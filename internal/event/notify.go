package event

// KindNotifyFailed: an attention signal (notify.command, notify.webhook,
// notify.desktop) could not be delivered, or was dropped.
const KindNotifyFailed Kind = "notify.failed"

// NotifyFailed records an attention signal that did not reach the user's
// channel: Channel is command, webhook or desktop ("queue" when the
// bounded queue was full and the signal was dropped).
type NotifyFailed struct {
	Channel string `json:"channel"`
	Signal  string `json:"signal"` // needs_input, paused, failed, landed, merge_parked
	Error   string `json:"error"`
}

// EventKind implements Payload.
func (NotifyFailed) EventKind() Kind { return KindNotifyFailed }
