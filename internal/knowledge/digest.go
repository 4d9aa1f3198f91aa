package knowledge

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/words"
)

// Bounds of a turn digest. A turn with more to say keeps its first lines
// and as many of its last as fit, with a note of what was left out.
const (
	maxDigest     = 4000 // bytes of a rendered digest
	digestHead    = 1200 // bytes of first lines kept when it does not fit
	maxDigestLine = 500  // bytes of one line
	maxTextLine   = 800  // bytes of an assistant text line
	maxArgs       = 160  // bytes of a call's arguments
	maxLines      = 160  // lines kept while a turn runs
	keptHead      = 12   // first lines never dropped while a turn runs
)

// digest is the transcript of a task's current turn.
type digest struct {
	turn    int
	lines   []string
	omitted int // lines dropped from the middle while the turn ran
}

// TurnDigest returns a compact transcript of task id's current (or last)
// turn, at most 4000 bytes: what the assistant said, the tools it called
// (name and short arguments), their results (ok or ERROR, and the start of
// the output), and the files that changed. It is "" for a task with
// nothing observed. A TurnStarted starts a new digest.
func (x *Extractor) TurnDigest(id string) string {
	st := x.tasks[id]
	if st == nil || len(st.digest.lines) == 0 {
		return ""
	}
	return st.digest.render()
}

func (d *digest) reset(turn int) {
	d.turn, d.lines, d.omitted = turn, d.lines[:0], 0
}

func (d *digest) add(line string, limit int) {
	d.lines = append(d.lines, words.Clip(line, limit-len(words.Ellipsis)))
	if len(d.lines) > maxLines {
		// Keep the head (the turn's intent) and the recent lines.
		d.lines = append(d.lines[:keptHead], d.lines[keptHead+1:]...)
		d.omitted++
	}
}

func (d *digest) text(p event.Text) {
	d.setTurn(p.Turn)
	d.add("assistant: "+words.OneLine(p.Text), maxTextLine)
}

func (d *digest) call(p event.ToolCall, c toolCall) {
	d.setTurn(p.Turn)
	d.add(fmt.Sprintf("call %s: %s", p.Name, shortArgs(p, c)), maxDigestLine)
}

func (d *digest) result(p event.ToolResult) {
	d.setTurn(p.Turn)
	status := "ok"
	if p.Error {
		status = "ERROR"
	}
	line := fmt.Sprintf("result %s: %s", p.Name, status)
	if pv := words.OneLine(strings.TrimSuffix(p.Preview, "…")); pv != "" {
		line += " — " + words.Clip(pv, 237)
	}
	if p.Error && p.Tail != "" {
		t := words.OneLine(strings.TrimPrefix(p.Tail, "…"))
		if len(t) > 160 {
			t = t[len(t)-160:]
			for len(t) > 0 && t[0]&0xC0 == 0x80 {
				t = t[1:]
			}
		}
		line += " … " + t
	}
	d.add(line, maxDigestLine)
}

func (d *digest) changed(p event.FileChanged) {
	d.setTurn(p.Turn)
	d.add(fmt.Sprintf("changed %s (%s)", p.Path, p.Op), maxDigestLine)
}

func (d *digest) learning(p event.Learning) {
	d.setTurn(p.Turn)
	d.add("recorded learning: "+words.OneLine(p.Summary), maxDigestLine)
}

// setTurn follows the turn numbers of engines that report no TurnStarted.
func (d *digest) setTurn(turn int) {
	if turn > d.turn && len(d.lines) > 0 && d.turn > 0 {
		d.reset(turn)
	}
	if d.turn == 0 {
		d.turn = turn
	}
}

// shortArgs is a call's arguments for a digest: the target for the known
// tools, else the compact JSON.
func shortArgs(p event.ToolCall, c toolCall) string {
	var s string
	switch c.family {
	case "bash", "read_file", "edit_file":
		s = c.target
	case "write_file":
		s = c.target
		if content := str(c.args, "content"); content != "" {
			s += fmt.Sprintf(" (%d bytes)", len(content))
		}
	case "glob":
		s = c.target
	case "grep":
		s = c.target
		if v := str(c.args, "path"); v != "" {
			s += " in " + v
		}
		if v := str(c.args, "glob", "include"); v != "" {
			s += " (" + v + ")"
		}
	case "record_learning":
		s = str(c.args, "summary")
	}
	if s == "" {
		var v any
		if json.Unmarshal(p.Args, &v) == nil {
			if b, err := json.Marshal(v); err == nil {
				s = string(b)
			}
		}
		if s == "" {
			s = string(p.Args)
		}
	}
	return words.Clip(words.OneLine(s), maxArgs-len(words.Ellipsis))
}

// render writes the digest, within maxDigest bytes.
func (d *digest) render() string {
	head := fmt.Sprintf("turn %d:\n", d.turn)
	total := len(head)
	for _, l := range d.lines {
		total += len(l) + 1
	}
	if total <= maxDigest && d.omitted == 0 {
		return head + strings.Join(d.lines, "\n") + "\n"
	}
	// The first lines up to digestHead, then the last ones that fit.
	var b strings.Builder
	b.WriteString(head)
	i := 0
	for ; i < len(d.lines) && b.Len()+len(d.lines[i])+1 <= digestHead; i++ {
		b.WriteString(d.lines[i])
		b.WriteByte('\n')
	}
	const noteRoom = 64
	room := maxDigest - b.Len() - noteRoom
	j := len(d.lines)
	for j > i && len(d.lines[j-1])+1 <= room {
		room -= len(d.lines[j-1]) + 1
		j--
	}
	if n := j - i + d.omitted; n > 0 {
		fmt.Fprintf(&b, "[… %d lines left out …]\n", n)
	}
	for _, l := range d.lines[j:] {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return words.Clip(b.String(), maxDigest-len(words.Ellipsis))
}
