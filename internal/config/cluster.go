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
	// RepoURL, when set, is the git URL workers fetch from and push to
	// (the coordinator's git server); empty: the task's repository path,
	// for workers on the coordinator's machine.
	RepoURL string `yaml:"repo_url"`
}

// DefaultCluster is the cluster section's defaults.
func DefaultCluster() Cluster {
	return Cluster{Listen: "127.0.0.1:7422", HeartbeatMs: 1000, HeartbeatMisses: 5}
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
	if c.Listen == "" || c.NatsURL != "" {
		return nil
	}
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return &Error{Key: "listen", Msg: fmt.Sprintf("%q is not host:port: %v", c.Listen, err)}
	}
	if c.TLSCert == "" && !Loopback(host) {
		return &Error{Key: "listen", Msg: fmt.Sprintf("%q is not a loopback address; set cluster.tls_cert and cluster.tls_key to listen there", c.Listen)}
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
