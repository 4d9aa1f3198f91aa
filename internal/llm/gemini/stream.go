package gemini

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
)

// maxCalls bounds the function calls of one reply.
const maxCalls = 128

// wireError is a Google API error: {"error": {code, message, status, details}}.
type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []struct {
		Type       string `json:"@type"`
		Reason     string `json:"reason"`
		RetryDelay string `json:"retryDelay"`
	} `json:"details"`
}

// classify builds the *llm.Error for e, received with HTTP status (zero
// for an error inside a stream, whose HTTP status was 200).
func (e *wireError) classify(status int) *llm.Error {
	out := &llm.Error{StatusCode: status, Message: e.Message}
	code := status
	if code == 0 {
		code = e.Code
	}
	for _, d := range e.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
			if wait, err := time.ParseDuration(d.RetryDelay); err == nil && wait > 0 && wait < 24*time.Hour {
				out.RetryAfter = wait
			}
		}
		if d.Reason == "API_KEY_INVALID" {
			out.Class = llm.ClassAuth
		}
	}
	msg := strings.ToLower(e.Message)
	switch {
	case out.Class != 0:
	case e.Status == "RESOURCE_EXHAUSTED" || code == http.StatusTooManyRequests:
		out.Class = llm.ClassRateLimit
	case e.Status == "UNAVAILABLE" || code == http.StatusServiceUnavailable:
		// "The model is overloaded. Please try again later."
		out.Class = llm.ClassOverloaded
	case e.Status == "UNAUTHENTICATED" || e.Status == "PERMISSION_DENIED":
		out.Class = llm.ClassAuth
	case strings.Contains(msg, "input token count") || strings.Contains(msg, "exceeds the maximum number of tokens"):
		out.Class = llm.ClassContextTooLong
	case e.Status == "INTERNAL" || e.Status == "DEADLINE_EXCEEDED":
		out.Class = llm.ClassServer
	default:
		out.Class = llm.ClassifyStatus(code, "", e.Message)
		if out.Class == llm.ClassUnknown {
			out.Class = llm.ClassServer
		}
	}
	return out
}

type chunk struct {
	Candidates []struct {
		Content *struct {
			Parts []struct {
				Text         string `json:"text"`
				Thought      bool   `json:"thought"`
				FunctionCall *struct {
					ID   string          `json:"id"`
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
		Index        int    `json:"index"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *struct {
		PromptTokenCount        int64 `json:"promptTokenCount"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
		CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
		ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string     `json:"modelVersion"`
	ResponseID   string     `json:"responseId"`
	Error        *wireError `json:"error"`
}

// accumulator builds a response from chunks (one for generateContent).
type accumulator struct {
	model  string
	respID string
	// callSeq stands in for the responseId in call ids when there is none.
	callSeq  uint64
	text     []byte
	calls    []llm.ToolCall
	finish   string
	blocked  string
	usage    llm.Usage
	finished bool
}

func (a *accumulator) add(data []byte, h func(llm.Event)) error {
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &llm.Error{Class: llm.ClassMalformed, Message: "decoding chunk", Err: err}
	}
	if c.Error != nil {
		return c.Error.classify(0)
	}
	if c.ModelVersion != "" {
		a.model = c.ModelVersion
	}
	if c.ResponseID != "" {
		a.respID = c.ResponseID
	}
	if u := c.UsageMetadata; u != nil {
		cached := max(0, u.CachedContentTokenCount)
		a.usage = llm.Usage{InputTokens: max(0, u.PromptTokenCount-cached), CacheReadTokens: cached,
			OutputTokens: max(0, u.CandidatesTokenCount) + max(0, u.ThoughtsTokenCount)}
	}
	if pf := c.PromptFeedback; pf != nil && pf.BlockReason != "" {
		a.blocked, a.finished = pf.BlockReason, true
	}
	for _, cand := range c.Candidates {
		if cand.Index != 0 {
			continue // we ask for one candidate
		}
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					if err := a.call(p.FunctionCall.ID, p.FunctionCall.Name, p.FunctionCall.Args); err != nil {
						return err
					}
				case p.Thought:
				case p.Text != "":
					a.text = append(a.text, p.Text...)
					if h != nil {
						h(llm.Event{Kind: llm.EventText, Text: p.Text})
					}
				}
			}
		}
		if cand.FinishReason != "" {
			a.finish, a.finished = cand.FinishReason, true
		}
	}
	return nil
}

func (a *accumulator) call(id, name string, args json.RawMessage) error {
	if len(a.calls) >= maxCalls {
		return malformed("more than %d function calls in one reply", maxCalls)
	}
	if name == "" {
		return malformed("function call %d has no name", len(a.calls))
	}
	if id == "" {
		// The API gives calls no ids; make one unique in the conversation.
		reply := a.respID
		if reply == "" {
			reply = fmt.Sprintf("call%d", a.callSeq)
		}
		id = fmt.Sprintf("gemini_%s_%d", reply, len(a.calls))
	}
	input, err := llm.ParseToolInput(args)
	if err != nil {
		return err
	}
	a.calls = append(a.calls, llm.ToolCall{ID: id, Name: name, Input: input})
	return nil
}

// response checks the stream was complete and returns the reply.
func (a *accumulator) response() (*llm.Response, error) {
	if !a.finished {
		return nil, &llm.Error{Class: llm.ClassNetwork, Message: "stream ended before a finishReason"}
	}
	resp := &llm.Response{Provider: llm.ProviderGemini, Model: a.model, Usage: a.usage, Attempts: 1, StopReason: finishReason(a.finish)}
	if a.blocked != "" {
		resp.StopReason = llm.StopRefusal
	}
	resp.Message.Role = llm.RoleAssistant
	if len(a.text) > 0 {
		resp.Message.Parts = append(resp.Message.Parts, llm.TextPart(string(a.text)))
	}
	for _, c := range a.calls {
		resp.Message.Parts = append(resp.Message.Parts, llm.ToolCallPart(c))
	}
	if len(a.calls) > 0 && resp.StopReason == llm.StopEndTurn {
		// The API ends a reply holding function calls with STOP.
		resp.StopReason = llm.StopToolUse
	}
	return resp, nil
}

func finishReason(r string) llm.StopReason {
	switch r {
	case "STOP":
		return llm.StopEndTurn
	case "MAX_TOKENS":
		return llm.StopMaxTokens
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY":
		return llm.StopRefusal
	}
	return llm.StopOther
}
