package geminicli

import "testing"

// TestInstalled installs the pinned CLI; .ci/run runs it before the tests.
func TestInstalled(t *testing.T) {
	if p := CLI(t); p == "" {
		t.Fatal("no path")
	}
}
