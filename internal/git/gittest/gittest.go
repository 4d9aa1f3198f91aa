// Package gittest helps tests that run real git.
package gittest

import (
	"os"
	"path/filepath"
)

// Isolate sets the process environment so that git ignores the machine's
// configuration and any repository above the temporary directory, and
// gives commits an author. Call it from TestMain, before m.Run.
func Isolate() {
	tmp := os.TempDir()
	real, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		real = tmp
	}
	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL":       os.DevNull,
		"GIT_CONFIG_NOSYSTEM":     "1",
		"GIT_CEILING_DIRECTORIES": tmp + string(os.PathListSeparator) + real,
		"GIT_AUTHOR_NAME":         "Test",
		"GIT_AUTHOR_EMAIL":        "test@example.com",
		"GIT_COMMITTER_NAME":      "Test",
		"GIT_COMMITTER_EMAIL":     "test@example.com",
	} {
		os.Setenv(k, v)
	}
}
