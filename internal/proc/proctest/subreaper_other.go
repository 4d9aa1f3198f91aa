//go:build !linux

package proctest

import "testing"

// Subreaper does nothing outside Linux, where init (launchd) reaps orphans
// promptly.
func Subreaper(t testing.TB) { t.Helper() }
