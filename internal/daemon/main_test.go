package daemon_test

import (
	"os"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/sandbox"
)

// TestMain: the daemons these tests start run task commands through their
// own binary as the sandbox launcher, which is this test binary.
func TestMain(m *testing.M) {
	sandbox.ServeLauncher()
	os.Exit(m.Run())
}
