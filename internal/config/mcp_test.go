package config

import (
	"strings"
	"testing"
)

// TestMCPListenIsLoopbackOnly: the MCP server is never served beyond the
// machine.
func TestMCPListenIsLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", "127.0.0.1:7464", "[::1]:7464", "localhost:0"} {
		if err := (MCP{Listen: ok}).Validate(); err != nil {
			t.Errorf("listen %q: %v", ok, err)
		}
	}
	for addr, want := range map[string]string{
		"0.0.0.0:7464":   "not a loopback address",
		"10.0.0.1:7464":  "not a loopback address",
		"example.com:80": "not a loopback address",
		"127.0.0.1":      "not host:port",
		"127.0.0.1:x":    "no valid port",
	} {
		c := Default()
		c.MCP.Listen = addr
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "mcp.listen") {
			t.Errorf("listen %q: error %v, want mcp.listen … %s", addr, err, want)
		}
	}
}

// TestWebValidate: loopback serves plain HTTP; any other address needs
// both TLS files.
func TestWebValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		w  Web
		ok bool
	}{
		{Web{Listen: "127.0.0.1:7474"}, true},
		{Web{Listen: "localhost:0"}, true},
		{Web{Listen: "[::1]:80"}, true},
		{Web{Listen: "0.0.0.0:7474"}, false},
		{Web{Listen: "192.168.1.5:7474", TLSCert: "c.pem"}, false},
		{Web{Listen: "192.168.1.5:7474", TLSCert: "c.pem", TLSKey: "k.pem"}, true},
		{Web{Listen: "7474"}, false},
		{Web{Listen: "127.0.0.1:99999"}, false},
	} {
		if err := c.w.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v: Validate() = %v, want ok %v", c.w, err, c.ok)
		}
	}
}
