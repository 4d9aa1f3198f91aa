//go:build !linux

package proc

import (
	"errors"
	"os"
	"syscall"
)

func findCgroup() string                        { return "" }
func probeCgroup(string) error                  { return errors.ErrUnsupported }
func killCgroup(string) error                   { return nil }
func cgroupPIDs(string) []int                   { return nil }
func removeCgroup(string)                       {}
func intoCgroup(*syscall.SysProcAttr, *os.File) {}
func makeCgroup(string, string, string) (string, *os.File, error) {
	return "", nil, errors.ErrUnsupported
}
