// Package providers is the composition point of the model layer: it
// resolves configuration and environment into one llm.Client per tier,
// each a provider client wrapped in the shared limiter, the retry
// decorator and pricing. It is the only package that imports every
// provider package (anthropic, openai, responses, gemini); everything
// else depends on llm.Client.
package providers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/llm/anthropic"
	"github.com/neuraphage/neuraphage-go/internal/llm/gemini"
	"github.com/neuraphage/neuraphage-go/internal/llm/limit"
	"github.com/neuraphage/neuraphage-go/internal/llm/openai"
	"github.com/neuraphage/neuraphage-go/internal/llm/responses"
	"github.com/neuraphage/neuraphage-go/internal/llm/retry"
)

// Options holds collaborators; all are optional.
type Options struct {
	// HTTPClient carries every request; nil means one new client shared by
	// all tiers.
	HTTPClient *http.Client
	// Logger receives one record per retry; nil means no logging.
	Logger *slog.Logger
	// Retry overrides the retry decorator's collaborators (tests inject Sleep).
	Retry retry.Options
}

// Set holds the decorated clients of every tier. Tiers on the same
// provider share one limit.Limiter. It is safe for concurrent use.
type Set struct {
	resolution llm.Resolution
	catalogue  *llm.Catalogue
	clients    map[llm.Tier]llm.Client
}

// New builds a Set from cfg and env (use os.Getenv in production). With no
// usable provider it returns the *llm.SetupError from llm.Resolve, whose
// message tells the user what to set.
func New(cfg llm.Config, env func(string) string, o Options) (*Set, error) {
	res, err := llm.Resolve(cfg, env)
	if err != nil {
		return nil, err
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: transport()}
	}
	if o.Logger != nil && o.Retry.OnRetry == nil {
		log := o.Logger.With("component", "llm")
		o.Retry.OnRetry = func(r retry.Retry) {
			log.Warn("retrying model call", "attempt", r.Attempt, "wait", r.Wait, "class", llm.ClassOf(r.Err).String(), "err", r.Err)
		}
	}
	s := &Set{resolution: res, catalogue: llm.NewCatalogue(cfg.Models), clients: make(map[llm.Tier]llm.Client)}
	limiters := make(map[string]*limit.Limiter)
	idle := time.Duration(cfg.StreamIdleTimeoutSecsOrDefault()) * time.Second
	policy := retry.PolicyFromConfig(cfg.Retry)
	for _, t := range llm.Tiers() {
		target, _ := res.Target(t)
		ep := target.Endpoint
		pc, _ := cfg.Provider(ep.Provider)
		var base llm.Client
		switch ep.Provider {
		case llm.ProviderAnthropic:
			base, err = anthropic.New(anthropic.Options{BaseURL: ep.BaseURL, APIKey: ep.APIKey, Model: target.Model,
				MaxTokens: pc.MaxOutputTokens, IdleTimeout: idle, HTTPClient: hc})
		case llm.ProviderOpenAI:
			if pc.API == llm.APIResponses {
				base, err = responses.New(responses.Options{BaseURL: ep.BaseURL, APIKey: ep.APIKey, Model: target.Model,
					MaxTokens: pc.MaxOutputTokens, IdleTimeout: idle, HTTPClient: hc})
				break
			}
			base, err = openai.New(openai.Options{BaseURL: ep.BaseURL, APIKey: ep.APIKey, Model: target.Model,
				MaxTokens: pc.MaxOutputTokens, IdleTimeout: idle, HTTPClient: hc})
		case llm.ProviderGemini:
			base, err = gemini.New(gemini.Options{BaseURL: ep.BaseURL, APIKey: ep.APIKey, Model: target.Model,
				MaxTokens: pc.MaxOutputTokens, IdleTimeout: idle, HTTPClient: hc})
		default:
			err = fmt.Errorf("unknown provider %q", ep.Provider)
		}
		if err != nil {
			return nil, fmt.Errorf("building client for tier %s: %w", t, err)
		}
		lim, ok := limiters[ep.Provider]
		if !ok {
			lim = limit.NewLimiter(limit.Limits{MaxConcurrent: pc.MaxConcurrent,
				RequestsPerMinute: pc.RequestsPerMinute, TokensPerMinute: pc.TokensPerMinute})
			limiters[ep.Provider] = lim
		}
		c := retry.New(limit.New(base, lim), policy, o.Retry)
		s.clients[t] = &priced{next: c, catalogue: s.catalogue, provider: ep.Provider, model: target.Model}
	}
	return s, nil
}

// transport is the default transport with a pool that keeps connections
// for many concurrent calls: the default keeps two idle connections per
// host, so with dozens of tasks in flight most calls would open a new one.
func transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 512
	return t
}

// Client returns the decorated client of tier t.
func (s *Set) Client(t llm.Tier) (llm.Client, error) {
	c, ok := s.clients[t]
	if !ok {
		return nil, fmt.Errorf("getting model client: unknown tier %q", t)
	}
	return c, nil
}

// Resolution returns what every tier resolved to.
func (s *Set) Resolution() llm.Resolution { return s.resolution }

// Catalogue returns the model catalogue, overrides applied.
func (s *Set) Catalogue() *llm.Catalogue { return s.catalogue }

// priced fills Response.CostUSD from the catalogue.
type priced struct {
	next      llm.Client
	catalogue *llm.Catalogue
	provider  string
	model     string
}

func (p *priced) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := p.next.Complete(ctx, req)
	p.price(req, resp)
	return resp, err
}

func (p *priced) Stream(ctx context.Context, req *llm.Request, h func(llm.Event)) (*llm.Response, error) {
	resp, err := p.next.Stream(ctx, req, h)
	p.price(req, resp)
	return resp, err
}

func (p *priced) price(req *llm.Request, resp *llm.Response) {
	if resp == nil {
		return
	}
	for _, name := range []string{resp.Model, req.Model, p.model} {
		if m, ok := p.catalogue.Lookup(p.provider, name); ok && name != "" {
			resp.CostUSD = m.Cost(resp.Usage)
			return
		}
	}
}
