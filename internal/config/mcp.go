package config

import (
	"fmt"
	"net"
	"strconv"
)

// MCP configures the Model Context Protocol server the daemon serves over
// HTTP (docs/mcp.md). It is always served on the daemon's socket at /mcp;
// Listen adds a TCP listener on the loopback interface.
type MCP struct {
	// Listen is a loopback host:port ("127.0.0.1:7464") to serve /mcp on
	// over TCP; empty (the default) serves it only on the socket.
	Listen string `yaml:"listen"`
	// TokenFile holds the bearer token TCP clients must send; the daemon
	// writes a random one (mode 0600) when the file is missing. Empty:
	// mcp.token in the data directory.
	TokenFile string `yaml:"token_file"`
}

// Validate checks that Listen is a loopback address.
func (m MCP) Validate() error {
	if m.Listen == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(m.Listen)
	if err != nil {
		return &Error{Key: "listen", Msg: fmt.Sprintf("%q is not host:port: %v", m.Listen, err)}
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return &Error{Key: "listen", Msg: fmt.Sprintf("%q has no valid port", m.Listen)}
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return &Error{Key: "listen", Msg: fmt.Sprintf("%q is not a loopback address; the MCP server listens on 127.0.0.1, ::1 or localhost only", m.Listen)}
	}
	return nil
}
