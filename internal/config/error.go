package config

import (
	"strconv"
	"strings"
)

// Error is a configuration error. File and Line are set when the error comes
// from a file; Key is the dotted key concerned ("daemon.start_timeout_secs")
// when there is one.
type Error struct {
	File string // path of the configuration file, if any
	Line int    // 1-based line in File, 0 if unknown
	Key  string // dotted key, if any
	Msg  string // what is wrong; Err's text is used when empty
	Err  error  // optional cause, returned by Unwrap
}

// Error renders "FILE:LINE: KEY: MSG", omitting empty parts.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":")
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	msg := e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	b.WriteString(msg)
	return strings.TrimSuffix(b.String(), ": ")
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// ConfigField implements [FieldError], so a section defined in this package
// can return an *Error whose Key is relative to the section.
func (e *Error) ConfigField() (key, msg string) {
	msg = e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return e.Key, msg
}

// FieldError is implemented by errors that a section's Validate method
// returns to point at one of the section's keys. ConfigField returns that key
// relative to the section, dotted for nested fields and list indexes
// ("tiers.worker.provider", "hooks.0.command"; "" for the section itself), and
// the message to show after it. Packages outside config implement it with
// their own error type; they need not import config.
type FieldError interface {
	error
	ConfigField() (key, msg string)
}

// Validator is implemented by configuration sections that check their own
// values. See the package documentation for how its errors are reported.
type Validator interface {
	Validate() error
}
