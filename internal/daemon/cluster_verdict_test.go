package daemon_test

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/daemon"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// stampTap dials the worker's NATS connection and reads what the worker
// writes on it: the time the worker stamped on each tool call it sends
// up (the coordinator stores its own time of receipt, so the worker's is
// only on the wire), by call id.
type stampTap struct {
	mu     sync.Mutex
	stamps map[string]time.Time
}

func (t *stampTap) Dial(network, addr string) (net.Conn, error) {
	c, err := net.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	return &tapConn{Conn: c, t: t}, nil
}

// tapConn is one connection; buf holds what it wrote that is not yet a
// whole line or message.
type tapConn struct {
	net.Conn
	t   *stampTap
	buf []byte
}

func (c *tapConn) Write(p []byte) (int, error) {
	c.t.read(&c.buf, p)
	return c.Conn.Write(p)
}

// read takes the next bytes the worker writes and parses the whole
// protocol lines and messages among them (HPUB carries the task's
// observations and checkpoints; everything else is skipped).
func (t *stampTap) read(buf *[]byte, p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	*buf = append(*buf, p...)
	for {
		end := bytes.Index(*buf, []byte("\r\n"))
		if end < 0 {
			return
		}
		f := strings.Fields(string((*buf)[:end]))
		if len(f) < 4 || f[0] != "HPUB" {
			if len(f) >= 3 && f[0] == "PUB" {
				n, _ := strconv.Atoi(f[len(f)-1])
				if len(*buf) < end+2+n+2 {
					return
				}
				*buf = (*buf)[end+2+n+2:]
				continue
			}
			*buf = (*buf)[end+2:]
			continue
		}
		hdr, _ := strconv.Atoi(f[len(f)-2])
		total, _ := strconv.Atoi(f[len(f)-1])
		if len(*buf) < end+2+total+2 {
			return
		}
		msg := (*buf)[end+2 : end+2+total]
		if strings.HasPrefix(f[1], "np.up.") && bytes.Contains(msg[:hdr], []byte("Np-Kind: ckpt")) {
			var step struct {
				Events []event.Event `json:"events"`
			}
			if json.Unmarshal(msg[hdr:], &step) == nil {
				for _, e := range step.Events {
					if tc, ok := e.Payload.(event.ToolCall); ok {
						if t.stamps == nil {
							t.stamps = map[string]time.Time{}
						}
						t.stamps[tc.CallID] = e.Time
					}
				}
			}
		}
		*buf = (*buf)[end+2+total+2:]
	}
}

func (t *stampTap) stamp(callID string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.stamps[callID]
	return s, ok
}

// The time from a worker's stamp on the tool call that completes a loop
// (the worker's clock; the same machine's) to the Watcher's nudge on the
// coordinator, network hop included, over b.N looping tasks: the median,
// and the median of the hop alone (to the coordinator's own stamp).
func BenchmarkWatcherVerdictFromWorker(b *testing.B) {
	d := &clusterDaemon{modelDaemon: startModel(b, unattendedScript(), "", func(c *config.Config) {
		c.Supervision.Watcher.Enabled = true
		c.Supervision.Watcher.IntervalSecs = 1
		c.Merge.Auto = false
		c.Cluster.Enabled = true
		c.Cluster.Listen, c.Cluster.GitListen = "127.0.0.1:0", "127.0.0.1:0"
		c.Cluster.HeartbeatMs = 100
	}), workers: map[string]*testWorker{}}
	check := "#!/bin/sh\nv=$(cat VERSION) || { echo \"FAIL: no version\"; exit 1; }\necho \"ok: $v\"\n"
	if err := os.WriteFile(filepath.Join(d.repo, "check.sh"), []byte(check), 0o755); err != nil {
		b.Fatal(err)
	}
	gitCommit(b, d.repo, "check.sh")
	tap := &stampTap{}
	d.worker(b, 1, func(o *daemon.WorkerOptions) { o.NATS = append(o.NATS, nats.SetCustomDialer(tap)) })
	var verdicts, hops []time.Duration
	b.ResetTimer()
	for range b.N {
		loop := d.create(b, api.CreateTaskRequest{Description: "make the release check pass", Persona: "junior"})
		d.wait(b, loop.ID, "nudged", func(task.Task) bool { return len(d.events(b, loop.ID, event.KindWatcherNudge)) > 0 })
		nudge := d.events(b, loop.ID, event.KindWatcherNudge)[0]
		var last event.Event
		for _, c := range d.events(b, loop.ID, event.KindToolCall) {
			if c.ID < nudge.ID {
				last = c
			}
		}
		call := last.Payload.(event.ToolCall).CallID
		sent, ok := tap.stamp(call)
		if !ok {
			b.Fatalf("the worker's stamp of tool call %s was not seen on the wire", call)
		}
		verdicts = append(verdicts, nudge.Time.Sub(sent))
		hops = append(hops, last.Time.Sub(sent))
		d.wait(b, loop.ID, "finished", func(t task.Task) bool { return t.Status.Terminal() })
	}
	b.StopTimer()
	slices.Sort(verdicts)
	slices.Sort(hops)
	b.Logf("worker stamp to nudge: %v; hop to the coordinator's stamp: %v", verdicts, hops)
	b.ReportMetric(float64(verdicts[len(verdicts)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(verdicts[len(verdicts)-1].Microseconds())/1000, "ms-max")
	b.ReportMetric(float64(hops[len(hops)/2].Microseconds())/1000, "hop-ms-median")
}
