package config

import (
	"fmt"
	"net"
	"strconv"
)

// DefaultWebListen is where the web dashboard listens unless web.listen
// says otherwise: a fixed loopback port, so that a bookmark and an SSH
// tunnel keep working across daemon restarts.
const DefaultWebListen = "127.0.0.1:7474"

// Web configures the web dashboard the daemon serves (docs/web.md).
type Web struct {
	// Enabled starts the dashboard with the daemon; otherwise
	// `neuraphage web` starts it on demand.
	Enabled bool `yaml:"enabled"`
	// Listen is the host:port to serve on. A loopback address serves
	// plain HTTP; any other needs TLSCert and TLSKey.
	Listen string `yaml:"listen"`
	// TLSCert and TLSKey are PEM files; both or neither.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
}

// Loopback reports whether Listen names only the loopback interface.
func (w Web) Loopback() bool {
	host, _, err := net.SplitHostPort(w.Listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Validate checks the address and that an address off the loopback
// interface comes with TLS files.
func (w Web) Validate() error {
	host, port, err := net.SplitHostPort(w.Listen)
	if err != nil {
		return &Error{Key: "listen", Msg: fmt.Sprintf("%q is not host:port: %v", w.Listen, err)}
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return &Error{Key: "listen", Msg: fmt.Sprintf("%q has no valid port", w.Listen)}
	}
	if (w.TLSCert == "") != (w.TLSKey == "") {
		return &Error{Key: "tls_cert", Msg: "set both web.tls_cert and web.tls_key, or neither"}
	}
	if !w.Loopback() && w.TLSCert == "" {
		return &Error{Key: "listen", Msg: fmt.Sprintf("%q is not a loopback address (host %q); serving the dashboard beyond this machine needs web.tls_cert and web.tls_key (or use an SSH tunnel: docs/web.md)", w.Listen, host)}
	}
	return nil
}
