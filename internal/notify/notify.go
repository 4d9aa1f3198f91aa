// Package notify sends attention signals outside the daemon: when a task
// needs input, is paused (not by the user), fails, lands on main, or its merge
// parks, it runs the user's command with the signal as JSON on stdin, POSTs
// the JSON to a webhook (an ntfy topic, a chat hook) and shows it with
// notify-send, as configured (notify.* in the config).
//
// It never blocks the daemon: it reads the event bus through its own
// subscription, and hands signals to one delivery goroutine through a bounded
// queue; a full queue drops the signal. Each delivery has a timeout. The same
// signal for the same task is sent once per debounce window. A delivery that
// fails, and a dropped signal, is recorded as a notify.failed event.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/proc"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// The signals.
const (
	NeedsInput  = "needs_input"
	Paused      = "paused"
	Failed      = "failed"
	Landed      = "landed"
	MergeParked = "merge_parked"
)

// Signal is what a channel receives, as JSON.
type Signal struct {
	Signal    string    `json:"signal"` // one of the constants above
	TaskID    task.ID   `json:"task_id"`
	Title     string    `json:"title"`            // one line for people: "t-4k2x9 needs input"
	Reason    string    `json:"reason,omitempty"` // the question, the pause's or failure's reason
	EventID   int64     `json:"event_id"`
	EventKind string    `json:"event_kind"`
	At        time.Time `json:"at"`
}

// Classify returns the signal event e raises, if any. A pause the user asked
// for raises none: the user knows.
func Classify(e event.Event) (Signal, bool) {
	s := Signal{TaskID: e.TaskID, EventID: e.ID, EventKind: string(e.Kind), At: e.Time}
	switch p := e.Payload.(type) {
	case event.TaskStatus:
		s.Reason = p.Reason
		switch p.To {
		case task.Waiting:
			s.Signal = NeedsInput
		case task.Paused:
			if p.Reason == "paused by user" || p.From == "" {
				return Signal{}, false
			}
			s.Signal = Paused
		case task.Failed:
			s.Signal = Failed
		default:
			return Signal{}, false
		}
	case event.MergeLanded:
		s.Signal, s.Reason = Landed, "landed on "+p.Target+" as "+shortCommit(p.Commit)
	case event.MergeParked:
		s.Signal, s.Reason = MergeParked, p.Reason
	default:
		return Signal{}, false
	}
	s.Reason = words.Printable(s.Reason)
	s.Title = fmt.Sprintf("%s %s", e.TaskID, strings.ReplaceAll(s.Signal, "_", " "))
	return s, true
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// kinds are the event kinds Classify reads.
var kinds = []string{string(event.KindTaskStatus), string(event.KindMergeLanded), string(event.KindMergeParked)}

// Options configures a Notifier.
type Options struct {
	Command  string        // run with sh -c, the signal as JSON on stdin
	Webhook  string        // URL the signal is POSTed to as JSON
	Desktop  bool          // run notify-send when LookPath finds it
	Debounce time.Duration // the same signal for the same task is sent once in this window
	Timeout  time.Duration // per delivery; default 10s
	Queue    int           // signals waiting for delivery before new ones are dropped; default 64
	Logger   *slog.Logger
	// Report records a delivery's failure (a notify.failed event).
	Report func(task.ID, event.Payload)
	// HTTP posts to the webhook; default a client without its own timeout
	// (Timeout bounds each delivery).
	HTTP *http.Client
	// LookPath finds notify-send; default proc.LookPath.
	LookPath func(string) (string, error)
}

// Notifier delivers signals. Run it once.
type Notifier struct {
	o     Options
	queue chan Signal

	mu   sync.Mutex
	sent map[string]time.Time // task+signal → when last queued
}

// New returns a Notifier for o.
func New(o Options) *Notifier {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Queue <= 0 {
		o.Queue = 64
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Report == nil {
		o.Report = func(task.ID, event.Payload) {}
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{}
	}
	if o.LookPath == nil {
		o.LookPath = proc.LookPath
	}
	return &Notifier{o: o, queue: make(chan Signal, o.Queue), sent: map[string]time.Time{}}
}

// Enabled reports whether any channel is configured.
func (n *Notifier) Enabled() bool { return n.o.Command != "" || n.o.Webhook != "" || n.o.Desktop }

// Run reads the bus until ctx ends, delivering the signals of its events; the
// delivery goroutine is joined before it returns.
func (n *Notifier) Run(ctx context.Context, bus *event.Bus) error {
	if !n.Enabled() {
		return nil
	}
	var wg sync.WaitGroup
	wg.Go(func() { n.deliverAll(ctx) })
	defer wg.Wait()
	sub := bus.Subscribe(event.Filter{Kinds: kinds})
	defer func() { sub.Close() }()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, event.ErrClosed) {
				return nil
			}
			if errors.Is(err, event.ErrLagged) {
				sub.Close()
				sub = bus.Subscribe(event.Filter{Kinds: kinds})
				continue
			}
			return err
		}
		if s, ok := Classify(e); ok {
			n.Offer(s)
		}
	}
}

// Offer queues s for delivery unless the same signal for the same task was
// queued within the debounce window, or the queue is full (then it is
// recorded as dropped). It never blocks.
func (n *Notifier) Offer(s Signal) bool {
	key := string(s.TaskID) + "\x00" + s.Signal
	now := time.Now()
	n.mu.Lock()
	if last, ok := n.sent[key]; ok && now.Sub(last) < n.o.Debounce {
		n.mu.Unlock()
		return false
	}
	n.sent[key] = now
	for k, t := range n.sent {
		if now.Sub(t) >= n.o.Debounce && k != key {
			delete(n.sent, k)
		}
	}
	n.mu.Unlock()
	select {
	case n.queue <- s:
		return true
	default:
		n.o.Logger.Warn("attention signal dropped: the delivery queue is full", "task_id", s.TaskID, "signal", s.Signal)
		n.o.Report(s.TaskID, event.NotifyFailed{Channel: "queue", Signal: s.Signal, Error: fmt.Sprintf("dropped: %d signals already wait for delivery", cap(n.queue))})
		return false
	}
}

// deliverAll delivers queued signals one at a time until ctx ends.
func (n *Notifier) deliverAll(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-n.queue:
			n.deliver(ctx, s)
		}
	}
}

// deliver sends s to every configured channel, each under the timeout.
func (n *Notifier) deliver(ctx context.Context, s Signal) {
	body, err := json.Marshal(s)
	if err != nil {
		n.failed(s, "encode", err)
		return
	}
	if n.o.Command != "" {
		n.failed(s, "command", n.runCommand(ctx, body))
	}
	if n.o.Webhook != "" {
		n.failed(s, "webhook", n.post(ctx, body))
	}
	if n.o.Desktop {
		n.failed(s, "desktop", n.desktop(ctx, s))
	}
}

func (n *Notifier) failed(s Signal, channel string, err error) {
	if err == nil {
		return
	}
	n.o.Logger.Warn("attention signal not delivered", "task_id", s.TaskID, "signal", s.Signal, "channel", channel, "err", err)
	n.o.Report(s.TaskID, event.NotifyFailed{Channel: channel, Signal: s.Signal, Error: err.Error()})
}

func (n *Notifier) runCommand(ctx context.Context, body []byte) error {
	return n.run(ctx, proc.Cmd{Shell: n.o.Command, Stdin: append(body, '\n'), Label: n.o.Command})
}

// run runs c under the timeout, without the daemon's secrets in its
// environment.
func (n *Notifier) run(ctx context.Context, c proc.Cmd) error {
	c.Env = proc.WithoutSecrets(os.Environ())
	c.Timeout, c.Grace, c.MaxOutput = n.o.Timeout, time.Second, 4<<10
	res, err := proc.Run(ctx, c)
	switch {
	case err != nil:
		return err
	case res.TimedOut:
		return fmt.Errorf("%s timed out after %s", c.Label, n.o.Timeout)
	case res.Cancelled:
		return fmt.Errorf("%s: cancelled: the daemon is stopping", c.Label)
	case res.ExitCode != 0:
		return fmt.Errorf("%s: exit status %d: %s", c.Label, res.ExitCode, truncate(strings.TrimSpace(res.Output), 200))
	}
	return nil
}

func (n *Notifier) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, n.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.o.Webhook, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.o.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("POST %s timed out after %s", n.o.Webhook, n.o.Timeout)
		}
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s: %s", n.o.Webhook, resp.Status, truncate(strings.TrimSpace(string(msg)), 200))
	}
	return nil
}

func (n *Notifier) desktop(ctx context.Context, s Signal) error {
	path, err := n.o.LookPath("notify-send")
	if err != nil {
		return nil // not installed: notify.desktop asks for it only when present
	}
	return n.run(ctx, proc.Cmd{Args: []string{path, "--app-name=neuraphage", s.Title, words.Or(s.Reason, s.Title)}, Label: "notify-send"})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
