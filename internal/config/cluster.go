package config

import (
	"fmt"
	"net"
	"time"
)

// Cluster runs the native engine's tasks on workers over NATS JetStream
// (docs/cluster.md).
type Cluster struct {
	// Enabled makes the daemon the cluster's coordinator.
	Enabled bool `yaml:"enabled"`
	// Listen is where the embedded NATS server listens ("127.0.0.1:7422");
	// ":0" or a zero port picks a free one. Off loopback it needs TLSCert
	// and TLSKey.
	Listen string `yaml:"listen"`
	// NatsURL, when set, is an existing NATS server with JetStream to use
	// instead of the embedded one.
	NatsURL string `yaml:"nats_url"`
	// Advertise is the URL join-info gives workers; empty: nats://Listen.
	Advertise string `yaml:"advertise"`
	// TLSCert and TLSKey are the embedded server's certificate files.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// HeartbeatMs is how often workers beat; HeartbeatMisses how many
	// beats a worker may miss before its tasks go elsewhere.
	HeartbeatMs     int `yaml:"heartbeat_ms"`
	HeartbeatMisses int `yaml:"heartbeat_misses"`
	// GitListen is where the coordinator serves the tasks' code to
	// workers over git's smart HTTP (loopback unless TLS is set); empty:
	// workers use the task's repository path (workers on this machine).
	GitListen string `yaml:"git_listen"`
	// GitURL is the base URL workers reach it at; empty: http(s)://GitListen.
	GitURL string `yaml:"git_url"`
}

// DefaultCluster is the cluster section's defaults.
func DefaultCluster() Cluster {
	return Cluster{Listen: "127.0.0.1:7422", GitListen: "127.0.0.1:7423", HeartbeatMs: 1000, HeartbeatMisses: 5}
}

// Validate checks the section: a listener off loopback needs TLS.
func (c Cluster) Validate() error {
	if c.HeartbeatMs < 10 {
		return &Error{Key: "heartbeat_ms", Msg: fmt.Sprintf("%d is below 10", c.HeartbeatMs)}
	}
	if c.HeartbeatMisses < 1 {
		return &Error{Key: "heartbeat_misses", Msg: fmt.Sprintf("%d is below 1", c.HeartbeatMisses)}
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return &Error{Key: "tls_cert", Msg: "tls_cert and tls_key go together"}
	}
	if c.NatsURL == "" {
		if err := c.checkListen("listen", c.Listen); err != nil {
			return err
		}
	}
	return c.checkListen("git_listen", c.GitListen)
}

// checkListen refuses a listener off loopback without TLS.
func (c Cluster) checkListen(key, addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return &Error{Key: key, Msg: fmt.Sprintf("%q is not host:port: %v", addr, err)}
	}
	if c.TLSCert == "" && !Loopback(host) {
		return &Error{Key: key, Msg: fmt.Sprintf("%q is not a loopback address; set cluster.tls_cert and cluster.tls_key to listen there", addr)}
	}
	return nil
}

// Loopback reports whether host is localhost or a loopback IP.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Heartbeat is HeartbeatMs as a duration.
func (c Cluster) Heartbeat() time.Duration { return time.Duration(c.HeartbeatMs) * time.Millisecond }
