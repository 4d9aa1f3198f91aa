package metrics

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ContentType is the Prometheus text exposition format, version 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// scrapeTimeout bounds the store reads of one scrape.
const scrapeTimeout = 10 * time.Second

// Scraper is what Handler serves: Collector implements it.
type Scraper interface {
	// WriteText writes every metric in the text exposition format.
	WriteText(ctx context.Context, b *bytes.Buffer) error
}

// Handler serves s's metrics on GET (and HEAD) in the Prometheus text
// format: the daemon mounts it at /metrics on its Unix socket, and the web
// dashboard on its listener. A failed read of the store answers 500 with
// the error, so a scraper records the target as down rather than reading
// half a page.
func Handler(s Scraper, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "metrics: only GET", http.StatusMethodNotAllowed)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), scrapeTimeout)
		defer cancel()
		var b bytes.Buffer
		if err := s.WriteText(ctx, &b); err != nil {
			log.Error("collecting metrics", "err", err)
			http.Error(w, "collecting metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", ContentType)
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		if r.Method == http.MethodGet {
			w.Write(b.Bytes())
		}
	})
}

// kind is a metric family's TYPE.
type kind string

const (
	counter kind = "counter"
	gauge   kind = "gauge"
)

// family is one metric: its name, type, help and label names; samples are
// written after it with sample.
type family struct {
	name   string
	kind   kind
	help   string
	labels []string
}

// textWriter writes families and samples in the text format.
type textWriter struct{ b *bytes.Buffer }

// head writes the HELP and TYPE lines of f.
func (w textWriter) head(f family) {
	w.b.WriteString("# HELP ")
	w.b.WriteString(f.name)
	w.b.WriteByte(' ')
	w.b.WriteString(escapeHelp(f.help))
	w.b.WriteString("\n# TYPE ")
	w.b.WriteString(f.name)
	w.b.WriteByte(' ')
	w.b.WriteString(string(f.kind))
	w.b.WriteByte('\n')
}

// sample writes one sample of f with values for f's labels, in order.
func (w textWriter) sample(f family, v float64, values ...string) {
	if len(values) != len(f.labels) {
		panic("metrics: " + f.name + " takes " + strconv.Itoa(len(f.labels)) + " label values")
	}
	w.b.WriteString(f.name)
	if len(values) > 0 {
		w.b.WriteByte('{')
		for i, l := range f.labels {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.b.WriteString(l)
			w.b.WriteString(`="`)
			w.b.WriteString(escapeLabel(values[i]))
			w.b.WriteByte('"')
		}
		w.b.WriteByte('}')
	}
	w.b.WriteByte(' ')
	w.b.WriteString(formatValue(v))
	w.b.WriteByte('\n')
}

// one writes a family with a single unlabelled sample.
func (w textWriter) one(f family, v float64) {
	w.head(f)
	w.sample(f, v)
}

// table writes a family of one label from a map, in the label's order;
// keys in always are written (as 0) even when absent, so a series exists
// before its first increment.
func (w textWriter) table(f family, m map[string]float64, always ...string) {
	w.head(f)
	keys := make([]string, 0, len(m)+len(always))
	for k := range m {
		keys = append(keys, k)
	}
	for _, k := range always {
		if _, ok := m[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.sample(f, m[k], k)
	}
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// escapeHelp escapes a HELP text: backslash and line feed.
func escapeHelp(s string) string { return helpEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD")) }

// escapeLabel escapes a label value: backslash, double quote and line
// feed; bytes that are not UTF-8 become U+FFFD, since the format is UTF-8.
func escapeLabel(s string) string {
	return labelEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

// formatValue writes v as the format wants: Go float syntax, with +Inf,
// -Inf and NaN spelled so.
func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
