package cli

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/llm/llmtest"
)

type fakeLLMOpts struct {
	listen string
	script string
}

func (a *app) newDevFakeLLMCmd() *cobra.Command {
	var opts fakeLLMOpts
	cmd := &cobra.Command{
		Use:   "fake-llm --script FILE [--listen ADDR]",
		Short: "Serve the scripted model server (Anthropic, OpenAI and Gemini wire formats) until interrupted",
		Long: `fake-llm serves the Anthropic Messages API (POST /v1/messages), OpenAI Chat
Completions (POST /v1/chat/completions), the OpenAI Responses API (POST
/v1/responses) and the Gemini API (POST /v1beta/models/M:generateContent and
:streamGenerateContent?alt=sse), streaming and not, with replies and faults
from a YAML script (format: docs/llm.md). Point a provider at it with
ANTHROPIC_BASE_URL=http://ADDR, OPENAI_BASE_URL=http://ADDR/v1 or
GOOGLE_GEMINI_BASE_URL=http://ADDR. It logs one line per request to stderr.`,
		Args: noArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runDevFakeLLM(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		}),
	}
	cmd.Flags().StringVar(&opts.listen, "listen", "127.0.0.1:8089", "address to listen on (loopback by default)")
	cmd.Flags().StringVar(&opts.script, "script", "", "the script file (required)")
	return cmd
}

func (a *app) runDevFakeLLM(ctx context.Context, opts fakeLLMOpts, out, errOut io.Writer) error {
	if opts.script == "" {
		return &usageError{msg: "--script is required", hint: "neuraphage dev fake-llm --script replies.yaml (format: docs/llm.md)"}
	}
	script, err := llmtest.LoadScript(opts.script)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.listen)
	if err != nil {
		return usageErrorf("--listen %s: %v", opts.listen, err)
	}
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(out, "scripted model server on %s\n  ANTHROPIC_BASE_URL=%s\n  OPENAI_BASE_URL=%s/v1\n  GOOGLE_GEMINI_BASE_URL=%s\n", url, url, url, url)
	return llmtest.ServeListener(ctx, ln, script, errOut)
}
