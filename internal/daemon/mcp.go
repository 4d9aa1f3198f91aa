package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/api/client"
	"github.com/neuraphage/neuraphage-go/internal/api/server"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/mcp"
)

// mcpPath is where the MCP server's streamable HTTP transport is mounted.
const mcpPath = "/mcp"

// mcpHandler is the MCP server over HTTP. It is a client of the daemon's
// own API on the socket, as `neuraphage mcp` is.
func mcpHandler(socket, version string) http.Handler {
	loop := client.New(socket)
	return mcp.HTTPHandler(mcp.Options{Connect: func(context.Context) (*client.Client, error) { return loop, nil }, Version: version})
}

// withMCP mounts h at /mcp beside the API.
func withMCP(apiHandler, h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(mcpPath, h)
	mux.Handle("/", apiHandler)
	return mux
}

// mcpTCP is the TCP listener of mcp.listen and its server, serving only /mcp
// and only to requests with the bearer token of mcp.token_file.
type mcpTCP struct {
	ln  net.Listener
	srv *http.Server
}

// listenMCP opens mcp.listen, or returns nil when it is empty.
func listenMCP(cfg config.MCP, p config.Paths, h http.Handler, base func(net.Listener) context.Context) (*mcpTCP, error) {
	if cfg.Listen == "" {
		return nil, nil
	}
	tokenFile := cfg.TokenFile
	if tokenFile == "" {
		tokenFile = filepath.Join(p.DataDir, "mcp.token")
	}
	token, err := mcpToken(tokenFile)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("mcp.listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(mcpPath, h)
	return &mcpTCP{ln: ln, srv: &http.Server{Handler: server.RequireToken(mux, token, tokenFile), BaseContext: base, ReadHeaderTimeout: 10 * time.Second}}, nil
}

// serve serves until ctx ends, then shuts the server down within timeout.
func (t *mcpTCP) serve(ctx context.Context, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- t.srv.Serve(t.ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving MCP on %s: %w", t.ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := t.srv.Shutdown(sctx); err != nil {
		t.srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving MCP on %s: %w", t.ln.Addr(), err)
	}
	return nil
}

// mcpToken reads the bearer token of file, writing a random one (mode 0600)
// when the file is missing: it outlives daemon restarts, so a host's
// configuration keeps working.
func mcpToken(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err == nil {
		t := strings.TrimSpace(string(b))
		if len(t) < 16 {
			return "", fmt.Errorf("mcp.token_file %s holds no token of 16 characters or more", file)
		}
		return t, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("mcp.token_file: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("making the MCP token: %w", err)
	}
	t := hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", fmt.Errorf("mcp.token_file: %w", err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("mcp.token_file: %w", err)
	}
	_, err = f.WriteString(t + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("mcp.token_file: %w", err)
	}
	return t, nil
}
