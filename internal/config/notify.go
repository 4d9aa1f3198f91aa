package config

import (
	"fmt"
	"net/url"
)

// Notify configures the attention signals sent outside the daemon.
type Notify struct {
	Command      string `yaml:"command"`       // run with sh -c, the signal as JSON on stdin; default "" (none)
	Webhook      string `yaml:"webhook"`       // http(s) URL the signal is POSTed to as JSON (e.g. an ntfy topic); default ""
	Desktop      bool   `yaml:"desktop"`       // run notify-send when it is installed; default false
	DebounceSecs int    `yaml:"debounce_secs"` // the same signal for the same task is sent once in this window; default 30, 0..3600
	TimeoutSecs  int    `yaml:"timeout_secs"`  // per delivery; default 10, 1..300
}

// Enabled reports whether any channel is configured.
func (n Notify) Enabled() bool { return n.Command != "" || n.Webhook != "" || n.Desktop }

// Validate checks the webhook URL and the ranges.
func (n Notify) Validate() error {
	if n.Webhook != "" {
		u, err := url.Parse(n.Webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &Error{Key: "webhook", Msg: fmt.Sprintf("want an http or https URL, got %q", n.Webhook)}
		}
	}
	if err := checkRange("debounce_secs", n.DebounceSecs, 0, 3600); err != nil {
		return err
	}
	return checkRange("timeout_secs", n.TimeoutSecs, 1, 300)
}
