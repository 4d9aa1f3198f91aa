package cluster

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Workers authenticate with their own token and see only their own work
// queue: another worker's consumer, the work subjects, a foreign inbox and
// making a consumer of a task's messages are refused; an unknown token does
// not connect.
func TestWorkerTokensAndPermissions(t *testing.T) {
	t.Parallel()
	tokens, err := OpenTokens(filepath.Join(t.TempDir(), "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartServer(ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	coord, err := nats.Connect(srv.URL(), nats.Token(srv.Internal))
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	ctx := context.Background()
	if _, err := NewCoordinator(ctx, Options{Conn: coord, Tokens: tokens}); err != nil {
		t.Fatal(err)
	}
	a, tokA, err := tokens.Issue(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := tokens.Issue(map[string]string{"gpu": "1"})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(coord)
	for _, w := range []string{a, b} {
		if _, err := js.CreateOrUpdateConsumer(ctx, StreamWork, jetstream.ConsumerConfig{Durable: workConsumer(w),
			FilterSubject: workSubject(w), AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := nats.Connect(srv.URL(), nats.Token(tokA+"x")); err == nil {
		t.Error("a wrong token connected")
	}
	if _, err := nats.Connect(srv.URL(), nats.Token("np1."+b+".0123456789abcdef0123")); err == nil {
		t.Error("another worker's name with a made-up secret connected")
	}
	violations := make(chan string, 16)
	nc, err := nats.Connect(srv.URL(), nats.Token(tokA), nats.CustomInboxPrefix(InboxPrefix(a)),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { violations <- err.Error() }))
	if err != nil {
		t.Fatalf("the worker's own token: %v", err)
	}
	defer nc.Close()
	wjs, _ := jetstream.New(nc)
	if _, err := wjs.Consumer(ctx, StreamWork, workConsumer(a)); err != nil {
		t.Errorf("its own work queue: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := wjs.Consumer(short, StreamWork, workConsumer(b)); err == nil {
		t.Error("it read another worker's work queue")
	}
	short2, cancel2 := context.WithTimeout(ctx, 2*time.Second)
	defer cancel2()
	if _, err := wjs.CreateConsumer(short2, StreamInject, jetstream.ConsumerConfig{FilterSubject: injSubject("t-other")}); err == nil {
		t.Error("it made a consumer of another task's messages")
	}
	if _, err := nc.Subscribe("np.work.>", func(*nats.Msg) {}); err == nil {
		nc.Flush()
	}
	if _, err := nc.Subscribe("_INBOX.>", func(*nats.Msg) {}); err == nil {
		nc.Flush()
	}
	want := map[string]bool{"np.work.>": false, "_INBOX.>": false, "CONSUMER.INFO." + StreamWork + "." + workConsumer(b): false,
		"CONSUMER.CREATE." + StreamInject: false}
	deadline := time.After(10 * time.Second)
	for {
		done := true
		for _, seen := range want {
			done = done && seen
		}
		if done {
			break
		}
		select {
		case v := <-violations:
			for k := range want {
				if strings.Contains(v, k) {
					want[k] = true
				}
			}
		case <-deadline:
			t.Fatalf("permission violations seen: %v", want)
		}
	}
	if _, labels, ok := tokens.lookup(b); !ok || labels["gpu"] != "1" {
		t.Errorf("labels of a restricted token: %v", labels)
	}
}
