package spawn

import (
	"errors"
	"os/exec"
	"runtime"
)

// ErrNoBrowser says no browser can be opened here: no display, or no
// xdg-open (open on macOS).
var ErrNoBrowser = errors.New("no display or no xdg-open to open a browser with")

// OpenURL opens url in the user's browser, detached, when a display is at
// hand (getenv says DISPLAY or WAYLAND_DISPLAY; macOS always has one).
func OpenURL(url string, getenv func(string) string) error {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	} else if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		return ErrNoBrowser
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		return ErrNoBrowser
	}
	cmd := exec.Command(path, url)
	if err := cmd.Start(); err != nil {
		return err
	}
	// The opener hands the URL to the browser and exits; nobody waits for it.
	return cmd.Process.Release()
}
