package tool

import "strings"

// token is a word or an operator of a shell command line.
type token struct {
	text string
	op   bool
}

// operators, longest first so that ">>" is not read as ">" ">".
var operators = []string{"&>>", "&&", "||", ";;", ">>", ">|", ">&", "&>", "<<", "<&", "<>", ";", "&", "|", "(", ")", "<", ">", "\n", "`"}

// lex splits a command line into words and operators the way a POSIX shell
// would for the purpose of finding redirections: quotes and backslashes are
// honoured and removed, expansions are left as they are, and a number right
// before a redirection (2>) is dropped. It is not a shell parser: here
// documents and nested quoting inside $(...) are read as plain words, which
// at worst finds a redirection that is not one.
func lex(s string) []token {
	var toks []token
	var word strings.Builder
	inWord := false
	quotedWord := false
	flush := func() {
		if inWord {
			toks = append(toks, token{text: word.String()})
		}
		word.Reset()
		inWord, quotedWord = false, false
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\'':
			inWord, quotedWord = true, true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				word.WriteString(s[i+1:])
				i = len(s)
				continue
			}
			word.WriteString(s[i+1 : i+1+j])
			i += j + 2
			continue
		case c == '"':
			inWord, quotedWord = true, true
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				word.WriteByte(s[i])
				i++
			}
			i++
			continue
		case c == '\\' && i+1 < len(s):
			inWord, quotedWord = true, true
			if s[i+1] != '\n' {
				word.WriteByte(s[i+1])
			}
			i += 2
			continue
		case c == ' ' || c == '\t':
			flush()
			i++
			continue
		case c == '#' && !inWord:
			// A comment runs to the end of the line.
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(s)
			}
			continue
		}
		if c == '$' && i+1 < len(s) && s[i+1] == '(' {
			// $( starts a command like ( does; keep the $ out of the way.
			flush()
			toks = append(toks, token{text: "(", op: true})
			i += 2
			continue
		}
		op := ""
		for _, o := range operators {
			if strings.HasPrefix(s[i:], o) {
				op = o
				break
			}
		}
		if op == "" {
			inWord = true
			word.WriteByte(c)
			i++
			continue
		}
		if (op[0] == '>' || op[0] == '<') && inWord && !quotedWord && isDigits(word.String()) {
			word.Reset() // "2>": the fd number belongs to the operator
			inWord = false
		}
		flush()
		toks = append(toks, token{text: op, op: true})
		i += len(op)
	}
	flush()
	return toks
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// writeTargets returns the files a command line's output redirections and
// tee commands write to.
func writeTargets(command string) []string {
	toks := lex(command)
	var targets []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.op {
			switch t.text {
			case ">", ">>", ">|", "&>", "&>>", "<>":
				if i+1 < len(toks) && !toks[i+1].op {
					targets = append(targets, toks[i+1].text)
					i++
				}
			case ">&":
				// >&2 and >&- duplicate a descriptor; >&file writes a file.
				if i+1 < len(toks) && !toks[i+1].op {
					if w := toks[i+1].text; w != "-" && !isDigits(w) {
						targets = append(targets, w)
					}
					i++
				}
			}
			continue
		}
		if (t.text == "tee" || strings.HasSuffix(t.text, "/tee")) && (i == 0 || toks[i-1].op) {
			for i+1 < len(toks) && !toks[i+1].op {
				i++
				if !strings.HasPrefix(toks[i].text, "-") {
					targets = append(targets, toks[i].text)
				}
			}
		}
	}
	return targets
}
