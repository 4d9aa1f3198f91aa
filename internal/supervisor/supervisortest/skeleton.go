package supervisortest

import (
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/supervisor"
)

// Skeleton is q with the contents of every supervisor.DataTag element replaced by
// "…": the structure a question has whatever its task text. Tests use it
// to show that task text cannot change a question's structure.
func Skeleton(q string) string {
	var b strings.Builder
	open, end := "<"+supervisor.DataTag, "</"+supervisor.DataTag+">"
	for {
		i := strings.Index(q, open)
		if i < 0 {
			b.WriteString(q)
			return b.String()
		}
		j := strings.Index(q[i:], ">")
		k := strings.Index(q[i:], end)
		if j < 0 || k < 0 || k < j {
			b.WriteString(q)
			return b.String()
		}
		b.WriteString(q[:i+j+1])
		b.WriteString("…")
		b.WriteString(end)
		q = q[i+k+len(end):]
	}
}
