package llmtest

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// parser walks the YAML node tree so that every error names its line and
// unknown keys are rejected. It collects errors rather than stopping at the
// first.
type parser struct {
	name string
	errs []error
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s:%d: %s", p.name, n.Line, fmt.Sprintf(format, args...)))
}

// mapping calls f for every key of a mapping node, rejecting keys not in allowed.
func (p *parser) mapping(n *yaml.Node, what string, allowed []string, f func(key string, v *yaml.Node)) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping", what)
		return
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(allowed, k.Value) {
			p.errorf(k, "%s: unknown key %q (want one of %q)", what, k.Value, allowed)
			continue
		}
		if seen[k.Value] {
			p.errorf(k, "%s: duplicate key %q", what, k.Value)
			continue
		}
		seen[k.Value] = true
		f(k.Value, v)
	}
}

func (p *parser) sequence(n *yaml.Node, what string, f func(i int, v *yaml.Node)) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s must be a list", what)
		return
	}
	for i, v := range n.Content {
		f(i, v)
	}
}

func (p *parser) scalar(n *yaml.Node, key string, dst any) {
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, "%s must be a scalar", key)
		return
	}
	if err := n.Decode(dst); err != nil {
		p.errorf(n, "%s: %s", key, yamlMessageOnly(err))
	}
}

// yamlMessageOnly drops the library's "yaml: unmarshal errors:\n  line N:" prefix.
func yamlMessageOnly(err error) string {
	if te, ok := err.(*yaml.TypeError); ok && len(te.Errors) > 0 {
		msg := te.Errors[0]
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if _, after, found := strings.Cut(rest, ": "); found {
				return after
			}
		}
		return msg
	}
	return err.Error()
}

func (p *parser) script(root *yaml.Node) *Script {
	s := &Script{}
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	p.mapping(doc, "script", []string{"conversations", "default"}, func(key string, v *yaml.Node) {
		switch key {
		case "conversations":
			p.sequence(v, "conversations", func(i int, c *yaml.Node) {
				s.Conversations = append(s.Conversations, p.conversation(c, fmt.Sprintf("conversations[%d]", i)))
			})
		case "default":
			c := p.conversation(v, "default")
			s.Default = &c
		}
	})
	return s
}

func (p *parser) conversation(n *yaml.Node, what string) Conversation {
	c := Conversation{line: n.Line}
	p.mapping(n, what, []string{"name", "match", "steps"}, func(key string, v *yaml.Node) {
		switch key {
		case "name":
			p.scalar(v, what+".name", &c.Name)
		case "match":
			p.mapping(v, what+".match", []string{"system", "user", "model", "after", "capture"}, func(key string, v *yaml.Node) {
				switch key {
				case "system":
					p.scalar(v, what+".match.system", &c.Match.System)
				case "user":
					p.scalar(v, what+".match.user", &c.Match.User)
				case "model":
					p.scalar(v, what+".match.model", &c.Match.Model)
				case "after":
					p.scalar(v, what+".match.after", &c.Match.After)
				case "capture":
					if v.Kind != yaml.MappingNode {
						p.errorf(v, "%s.match.capture must be a mapping of names to patterns", what)
						return
					}
					c.Match.Capture = map[string]string{}
					for i := 0; i+1 < len(v.Content); i += 2 {
						var re string
						p.scalar(v.Content[i+1], what+".match.capture."+v.Content[i].Value, &re)
						c.Match.Capture[v.Content[i].Value] = re
					}
				}
			})
		case "steps":
			p.sequence(v, what+".steps", func(i int, s *yaml.Node) {
				c.Steps = append(c.Steps, p.step(s, fmt.Sprintf("%s.steps[%d]", what, i)))
			})
		}
	})
	return c
}

func (p *parser) step(n *yaml.Node, what string) Step {
	st := Step{line: n.Line}
	keys := []string{"text", "tool_calls", "stop", "usage", "latency_ms", "chunk_delay_ms", "chunk_size", "fault"}
	p.mapping(n, what, keys, func(key string, v *yaml.Node) {
		k := what + "." + key
		switch key {
		case "text":
			p.scalar(v, k, &st.Text)
		case "stop":
			p.scalar(v, k, &st.Stop)
		case "latency_ms":
			p.scalar(v, k, &st.LatencyMs)
		case "chunk_delay_ms":
			p.scalar(v, k, &st.ChunkDelayMs)
		case "chunk_size":
			p.scalar(v, k, &st.ChunkSize)
		case "tool_calls":
			p.sequence(v, k, func(i int, tn *yaml.Node) {
				st.ToolCalls = append(st.ToolCalls, p.toolCall(tn, fmt.Sprintf("%s[%d]", k, i)))
			})
		case "usage":
			u := &Usage{}
			p.mapping(v, k, []string{"input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens"}, func(key string, v *yaml.Node) {
				dst := map[string]*int64{
					"input_tokens": &u.InputTokens, "output_tokens": &u.OutputTokens,
					"cache_write_tokens": &u.CacheWriteTokens, "cache_read_tokens": &u.CacheReadTokens,
				}[key]
				p.scalar(v, k+"."+key, dst)
				if *dst < 0 {
					p.errorf(v, "%s.%s must not be negative", k, key)
				}
			})
			st.Usage = u
		case "fault":
			f := &Fault{line: v.Line}
			p.mapping(v, k, []string{"kind", "times", "always", "retry_after_secs", "after_chunks"}, func(key string, v *yaml.Node) {
				switch key {
				case "kind":
					p.scalar(v, k+".kind", &f.Kind)
				case "times":
					p.scalar(v, k+".times", &f.Times)
				case "always":
					p.scalar(v, k+".always", &f.Always)
				case "retry_after_secs":
					p.scalar(v, k+".retry_after_secs", &f.RetryAfterSecs)
				case "after_chunks":
					p.scalar(v, k+".after_chunks", &f.AfterChunks)
				}
			})
			st.Fault = f
		}
	})
	return st
}

func (p *parser) toolCall(n *yaml.Node, what string) ToolCall {
	tc := ToolCall{line: n.Line}
	p.mapping(n, what, []string{"id", "name", "input"}, func(key string, v *yaml.Node) {
		switch key {
		case "id":
			p.scalar(v, what+".id", &tc.ID)
		case "name":
			p.scalar(v, what+".name", &tc.Name)
		case "input":
			if v.Kind != yaml.MappingNode {
				p.errorf(v, "%s.input must be a mapping", what)
				return
			}
			if err := v.Decode(&tc.Input); err != nil {
				p.errorf(v, "%s.input: %s", what, yamlMessageOnly(err))
			}
		}
	})
	return tc
}
