package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// BenchmarkPsTable10k measures the client's share of `ps --limit 0` with
// 10,000 tasks: the request to a daemon that answers at once, decoding the
// listing and laying out the table. BenchmarkPsJSON10k is `ps --all --json`.
func BenchmarkPsTable10k(b *testing.B) { benchPs(b, "ps", "--limit", "0") }

func BenchmarkPsJSON10k(b *testing.B) { benchPs(b, "ps", "--all", "--json") }

func benchPs(b *testing.B, args ...string) {
	now := time.Now().UTC()
	var body bytes.Buffer
	body.WriteString("{\"tasks\":[\n")
	for i := range 10_000 {
		if i > 0 {
			body.WriteString(",\n")
		}
		t, err := task.New(task.ID(fmt.Sprintf("t-%05d", i)), task.Spec{Description: fmt.Sprintf("task %d: add token expiry checks to the auth middleware", i), Priority: i % 5, Hold: true}, now)
		if err != nil {
			b.Fatal(err)
		}
		t.Usage = task.Usage{Iterations: i % 20, InputTokens: int64(i * 1000), OutputTokens: int64(i * 10), CostUSD: float64(i) / 100}
		row, _ := json.Marshal(t.Summarize())
		body.Write(row)
	}
	body.WriteString("\n]}\n")
	home := b.TempDir()
	if err := os.Mkdir(filepath.Join(home, "run"), 0o700); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(home, "run", "neuraphage.sock"))
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) { json.NewEncoder(w).Encode(api.Health{Status: "ok"}) })
	mux.HandleFunc("GET /v1/tasks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body.Bytes())
	})
	srv := &http.Server{Handler: mux}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	defer func() { srv.Close(); <-done }()
	var out bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		code := Main(Env{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out,
			Getenv:     func(k string) string { return map[string]string{"NEURAPHAGE_HOME": home}[k] },
			Version:    "bench",
			Executable: func() (string, error) { return "", errors.New("no daemon binary in benchmarks") },
			Argv0:      "neuraphage"})
		if code != ExitOK {
			b.Fatalf("exit %d: %s", code, out.String())
		}
	}
	b.ReportMetric(float64(out.Len()), "bytes")
}
