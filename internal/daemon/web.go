package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/web"
)

// webControl owns the web dashboard: started with the daemon when
// web.enabled is set, otherwise on the first POST /v1/web; stopped when
// the daemon stops. Run is its one loop; requests reach it over start.
type webControl struct {
	cfg     config.Web
	metrics http.Handler
	token   string
	socket  string
	timeout time.Duration
	log     *slog.Logger
	start   chan chan webStarted

	mu  sync.Mutex
	srv *web.Server
	url string
}

type webStarted struct {
	started bool
	err     error
}

// newWebControl returns the dashboard's owner; metrics is served at
// /metrics on its listener too, to a signed-in browser or a scraper with
// the API token.
func newWebControl(cfg config.Web, socket string, metrics http.Handler, token string, timeout time.Duration, log *slog.Logger) *webControl {
	return &webControl{cfg: cfg, socket: socket, metrics: metrics, token: token, timeout: timeout, log: log, start: make(chan chan webStarted)}
}

// Run serves the dashboard (at once with web.enabled, or when asked)
// until ctx ends, then shuts it down within the timeout.
func (wc *webControl) Run(ctx context.Context) error {
	var running *webRunning
	defer func() {
		if running != nil {
			running.stop(wc.timeout)
		}
	}()
	if wc.cfg.Enabled {
		r, err := wc.listen(ctx)
		if err != nil {
			return err
		}
		running = r
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case reply := <-wc.start:
			if running != nil {
				reply <- webStarted{}
				continue
			}
			r, err := wc.listen(ctx)
			if err == nil {
				running = r
			}
			reply <- webStarted{started: err == nil, err: err}
		case err := <-running.failed():
			return fmt.Errorf("serving the web dashboard: %w", err)
		}
	}
}

// webRunning is the dashboard's HTTP server and its hub, both joined by
// stop.
type webRunning struct {
	hs     *http.Server
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errc   chan error
}

func (r *webRunning) failed() <-chan error {
	if r == nil {
		return nil
	}
	return r.errc
}

func (r *webRunning) stop(timeout time.Duration) {
	r.cancel() // ends the SSE streams and the hub
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := r.hs.Shutdown(ctx); err != nil {
		r.hs.Close()
	}
	r.wg.Wait()
}

// listen opens web.listen (refusing an address off loopback without TLS)
// and starts serving.
func (wc *webControl) listen(ctx context.Context) (*webRunning, error) {
	if err := wc.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	var tlsCfg *tls.Config
	if wc.cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(wc.cfg.TLSCert, wc.cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("web.tls_cert/web.tls_key: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", wc.cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("web.listen %s: %w", wc.cfg.Listen, err)
	}
	scheme := "http"
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
		scheme = "https"
	}
	srv := web.New(web.Options{Client: client.New(wc.socket), Logger: wc.log, Loopback: wc.cfg.Loopback(), Secure: tlsCfg != nil,
		Metrics: wc.metrics, MetricsToken: wc.token})
	sctx, cancel := context.WithCancel(ctx)
	r := &webRunning{cancel: cancel, errc: make(chan error, 1),
		hs: &http.Server{Handler: srv.Handler(), BaseContext: func(net.Listener) context.Context { return sctx }, ReadHeaderTimeout: 10 * time.Second}}
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		if err := r.hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			r.errc <- err
		}
	}()
	go func() {
		defer r.wg.Done()
		srv.Run(sctx)
	}()
	wc.mu.Lock()
	wc.srv, wc.url = srv, scheme+"://"+ln.Addr().String()
	wc.mu.Unlock()
	wc.log.Info("serving the web dashboard", "url", wc.url)
	return r, nil
}

// Open starts the dashboard if needed and mints a sign-in link.
func (wc *webControl) Open(ctx context.Context, rotate bool) (api.WebLogin, error) {
	reply := make(chan webStarted, 1)
	select {
	case wc.start <- reply:
	case <-ctx.Done():
		return api.WebLogin{}, ctx.Err()
	}
	var res webStarted
	select {
	case res = <-reply:
	case <-ctx.Done():
		return api.WebLogin{}, ctx.Err()
	}
	if res.err != nil {
		return api.WebLogin{}, res.err
	}
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if rotate {
		wc.srv.Rotate()
	}
	return api.WebLogin{URL: wc.url, LoginURL: wc.url + wc.srv.Login(), Started: res.started}, nil
}
