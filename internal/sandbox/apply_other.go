//go:build !linux

package sandbox

import "fmt"

// Probe reports that only Linux has Landlock.
func Probe() Status { return Status{Reason: "Landlock is Linux only"} }

// Apply returns ErrUnavailable: only Linux has Landlock.
func (p Policy) Apply() error { return fmt.Errorf("%w: Landlock is Linux only", ErrUnavailable) }

// dieWithParent does nothing where Landlock is unavailable: Exec fails
// before it is called.
func dieWithParent(int) error { return nil }
