package knowledge

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"lowercase and trailing period", "The JWT library rejects tokens.", "the jwt library rejects tokens"},
		{"colon marker", "Note: the cache is per worktree", "the cache is per worktree"},
		{"marker under markdown emphasis", "**Important:** run make generate first", "run make generate first"},
		{"stacked markers", "Note: it turns out that the cache is per worktree", "the cache is per worktree"},
		{"found that", "I found that the cache is per worktree", "the cache is per worktree"},
		{"turns out without that", "Turns out the cache is per worktree!", "the cache is per worktree"},
		{"note as a verb is kept", "note the trailing slash", "note the trailing slash"},
		{"marker inside is kept", "the log says note: retry", "the log says note retry"},
		{"paths stay whole", "See src/auth/jwt.go, line 12.", "see src/auth/jwt.go line 12"},
		{"versions and identifiers", "v1.2 renamed user_id to x-request-id", "v1.2 renamed user_id to x-request-id"},
		{"relative path prefix dropped", "./scripts/dev.sh and ../x", "scripts/dev.sh and x"},
		{"quotes and backticks", "the `iat` claim is \"required\"", "the iat claim is required"},
		{"contractions", "it doesn't work; it isn't set", "it doesnt work it isnt set"},
		{"possessive", "jwt.go's parser and the user’s id", "jwt.go parser and the user id"},
		{"punctuation runs", "a -- b ... c / d", "a b c d"},
		{"double joiners", "a..b a/-b", "a b a b"},
		{"whitespace", "  a\t\tb\n\nc  ", "a b c"},
		{"unicode letters", "Ünïcode Straße", "ünïcode straße"},
		{"invalid UTF-8", "a\xffb", "a b"},
		{"empty", "", ""},
		{"only punctuation", "?!.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Normalize(tt.in)
			if got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := Normalize(got); again != got {
				t.Errorf("Normalize is not idempotent: %q then %q", got, again)
			}
		})
	}
}

func TestTerms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"stopwords dropped, plural cut, sorted", "The JWT library rejects tokens", []string{"jwt", "library", "reject", "token"}},
		{"negations read as not", "tokens without iat; no exp; doesn't refresh", []string{"exp", "iat", "not", "refresh", "token"}},
		{"short words and ss kept", "gas class bus", []string{"bus", "class", "gas"}},
		{"identifiers are one term", "tests live in tests/ and src/auth/jwt.go", []string{"src/auth/jwt.go", "test"}},
		{"deduplicated", "cache caches CACHE", []string{"cache"}},
		{"marker dropped", "Note: it turns out that", nil},
		{"nothing", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, Terms(tt.in)); diff != "" {
				t.Errorf("Terms(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// The similarity the store merges at is 0.75 (store.DefaultSimilarity).
const merge = 0.75

func TestSimilaritySameFact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, b string
		want       float64 // what it is today, to notice drift
	}{
		{"negation words", "The JWT library rejects tokens without an `iat` claim.",
			"Note: the JWT library rejects tokens that have no iat claim", 1},
		{"location verbs", "The rate limiter lives in internal/limit/bucket.go",
			"The rate limiter is implemented in internal/limit/bucket.go", 1},
		{"reworded with a marker", "The integration tests live in tests/integration and need Docker running.",
			"Integration tests are in tests/integration; they need docker to be running", 1},
		{"restated with more words", "Run `make generate` before `go build` or the protobuf stubs are missing.",
			"It turns out you must run make generate before go build, otherwise the protobuf stubs are missing", 0.9},
		{"one more word", "Use pnpm, not npm: the lockfile is pnpm-lock.yaml",
			"the project uses pnpm and not npm (pnpm-lock.yaml is the lockfile)", 0.9},
		{"equal normalized", "Note: user_id is a UUID string, not an int.", "user_id is a UUID string, not an int", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Similarity(tt.a, tt.b)
			if got < merge {
				t.Errorf("Similarity = %.3f, want ≥ %.2f\nterms %v\nterms %v", got, merge, Terms(tt.a), Terms(tt.b))
			}
			if diff := got - tt.want; diff > 0.001 || diff < -0.001 {
				t.Errorf("Similarity = %.3f, was %.3f", got, tt.want)
			}
			if rev := Similarity(tt.b, tt.a); rev != got {
				t.Errorf("not symmetric: %.3f and %.3f", got, rev)
			}
		})
	}
}

func TestSimilarityDifferentFacts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, b string
		want       float64
	}{
		{"same shape", "tests live in tests/", "docs live in docs/", 0},
		{"shared tooling words", "Migrations are in db/migrations and run with make migrate.",
			"Fixtures are in db/fixtures and load with make seed.", 0.111},
		{"same sentence, other package", "go test ./auth needs the JWT_SECRET environment variable",
			"go test ./billing needs the STRIPE_KEY environment variable", 0.556},
		{"opposite claims", "the parser accepts tabs", "the parser does not accept tabs", 0.375},
		{"opposite claims, longer", "The JWT library rejects tokens without an iat claim",
			"The JWT library rejects tokens with an iat claim", 0.429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Similarity(tt.a, tt.b)
			if got >= merge {
				t.Errorf("Similarity = %.3f, want < %.2f\nterms %v\nterms %v", got, merge, Terms(tt.a), Terms(tt.b))
			}
			if diff := got - tt.want; diff > 0.001 || diff < -0.001 {
				t.Errorf("Similarity = %.3f, was %.3f", got, tt.want)
			}
		})
	}
	// Different facts sharing words stay well apart.
	if got := Similarity("tests live in tests/", "docs live in docs/"); got >= 0.5 {
		t.Errorf("tests/docs: %.3f, want < 0.5", got)
	}
}

func TestSimilarityEdges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, b string
		want       float64
	}{
		{"no terms", "the", "the cache", 0},
		{"both empty", "", "", 0},
		{"equal stopwords only", "It is.", "it is", 1},
		{"containment below four terms", "cache config", "cache config path extra", 0.5},
		{"containment of four", "alpha beta gamma delta", "alpha beta gamma delta epsilon zeta eta theta", 0.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Similarity(tt.a, tt.b); got != tt.want {
				t.Errorf("Similarity(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestFTSQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"terms quoted and joined", "The JWT library rejects tokens", `"library" OR "reject" OR "token" OR "jwt"`},
		{"paths are phrases", "edit src/auth/jwt.go", `"src/auth/jwt.go" OR "edit"`},
		{"operators are words", `a AND b OR NOT c NEAR(d) "e" *f ^g:h`, `"near" OR "not" OR "b" OR "c" OR "d" OR "e" OR "f" OR "g" OR "h"`},
		{"nothing", "the a an ...", ""},
		{"only an underscore", "_", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := FTSQuery(tt.in); got != tt.want {
				t.Errorf("FTSQuery(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestFTSQueryKeepsTheLongestSixteen(t *testing.T) {
	t.Parallel()
	var words []string
	for i := range 20 {
		words = append(words, strings.Repeat("x", i+1))
	}
	q := FTSQuery(strings.Join(words, " "))
	terms := strings.Split(q, " OR ")
	if len(terms) != maxQueryTerms {
		t.Fatalf("%d terms, want %d: %s", len(terms), maxQueryTerms, q)
	}
	if terms[0] != `"`+strings.Repeat("x", 20)+`"` || terms[15] != `"`+strings.Repeat("x", 5)+`"` {
		t.Errorf("kept the wrong terms: %s", q)
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	a := Fingerprint("Note: the cache is per worktree.")
	if len(a) != 16 {
		t.Errorf("Fingerprint %q: want 16 hex digits", a)
	}
	if b := Fingerprint("the  cache is per `worktree`"); b != a {
		t.Errorf("same normalized text, different fingerprints: %s %s", a, b)
	}
	if c := Fingerprint("the cache is per task"); c == a {
		t.Errorf("different texts, same fingerprint %s", c)
	}
}

func TestPathTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"see `src/auth/jwt.go:42`, and ./cmd/main.go.", []string{"src/auth/jwt.go", "cmd/main.go"}},
		{"tests live in tests/ (not docs/)", []string{"tests", "docs"}},
		{"edit go.mod and README.md then config.yaml", []string{"go.mod", "README.md", "config.yaml"}},
		{"and/or input/output node.js e.g. v1.2 1/2", nil},
		{"/usr/local/bin/go and ~/x/y and https://x.io/a", nil},
		{"a/b a/b", []string{"a/b"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, pathTokens(tt.in)); diff != "" {
			t.Errorf("pathTokens(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
