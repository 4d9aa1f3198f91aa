package config

import (
	"strings"
	"testing"
)

// A cluster listener off loopback needs TLS; the defaults are valid.
func TestClusterListenOffLoopbackNeedsTLS(t *testing.T) {
	t.Parallel()
	if err := DefaultCluster().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, c := range []Cluster{
		{Listen: "0.0.0.0:7422", HeartbeatMs: 1000, HeartbeatMisses: 5},
		{Listen: "127.0.0.1:7422", GitListen: "10.0.0.5:7423", HeartbeatMs: 1000, HeartbeatMisses: 5},
	} {
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "tls_cert") {
			t.Errorf("%+v: err = %v, want a refusal naming tls_cert", c, err)
		}
		c.TLSCert, c.TLSKey = "cert.pem", "key.pem"
		if err := c.Validate(); err != nil {
			t.Errorf("%+v with TLS: %v", c, err)
		}
	}
	if err := (Cluster{Listen: "127.0.0.1:1", HeartbeatMs: 1000, HeartbeatMisses: 5, TLSCert: "c"}).Validate(); err == nil {
		t.Error("tls_cert without tls_key accepted")
	}
}
