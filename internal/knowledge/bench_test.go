package knowledge

import (
	"fmt"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// benchStream is a realistic turn sequence: reasoning text, searches, reads,
// a failing test run, an edit and a passing run.
func benchStream() []event.Payload {
	s := new(stream)
	for i := range 10 {
		s.start().
			text(fmt.Sprintf("Let me look at the token parser (step %d). It turns out the JWT library rejects tokens without an iat claim, so the fixture needs one.", i)).
			tool("grep", map[string]any{"pattern": "func ParseToken", "glob": "*.go"}, false, "internal/auth/jwt.go:12:func ParseToken(s string) (*Token, error) {\n").
			tool("glob", map[string]any{"pattern": "internal/auth/*_test.go"}, false, "internal/auth/jwt_test.go\ninternal/auth/session_test.go\n").
			tool("read_file", map[string]any{"path": "internal/auth/jwt.go"}, false, "package auth\n\nimport \"errors\"\n\nfunc ParseToken(s string) (*Token, error) {\n\treturn nil, errors.New(\"todo\")\n}\n").
			tool("bash", bash("go test ./internal/auth"), true, goTestFailure).
			tool("edit_file", map[string]any{"path": "internal/auth/jwt.go", "old": "todo", "new": "done"}, false, "Edited internal/auth/jwt.go.", "internal/auth/jwt.go").
			tool("bash", bash("go test ./internal/auth"), false, "ok  \texample.com/app/internal/auth\t0.004s\n[exit code 0]\n").
			end()
	}
	return s.evs
}

func BenchmarkObserve(b *testing.B) {
	evs := benchStream()
	x := NewExtractor(all)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprint("task-", i%64)
		for _, p := range evs {
			x.Observe(id, p)
		}
		x.Forget(id)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}

func BenchmarkTurnDigest(b *testing.B) {
	evs := benchStream()
	x := NewExtractor(all)
	for _, p := range evs {
		x.Observe("t", p)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = x.TurnDigest("t")
	}
}

func BenchmarkSimilarity(b *testing.B) {
	a := "The JWT library rejects tokens without an `iat` claim; see internal/auth/jwt.go."
	c := "Note: the JWT library rejects tokens that have no iat claim (internal/auth/jwt.go)"
	b.ReportAllocs()
	for b.Loop() {
		_ = Similarity(a, c)
	}
}

func BenchmarkFTSQuery(b *testing.B) {
	s := "Run `make generate` before `go build` or the protobuf stubs in gen/proto are missing."
	b.ReportAllocs()
	for b.Loop() {
		_ = FTSQuery(s)
	}
}
