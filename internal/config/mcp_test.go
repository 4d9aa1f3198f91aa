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
