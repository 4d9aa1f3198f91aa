package tool

import "fmt"

func (e *Env) maxOutput() int {
	if e.MaxOutput > 0 {
		return e.MaxOutput
	}
	return DefaultMaxOutput
}

func (e *Env) policy() *Policy {
	if e.Policy != nil {
		return e.Policy
	}
	return DefaultPolicy()
}

// bashTimeout returns the timeout for a call that asked for asked seconds
// (zero: the default), capped by the maximum.
func (e *Env) bashTimeout(asked Seconds) Seconds {
	t := asked
	if t <= 0 {
		t = e.BashTimeout
	}
	if t <= 0 {
		t = DefaultBashTimeout
	}
	return min(t, e.maxBashTimeout())
}

func (e *Env) maxBashTimeout() Seconds {
	if e.MaxBashTimeout > 0 {
		return e.MaxBashTimeout
	}
	return DefaultMaxBashTimeout
}

// failed is a result telling the model the call failed.
func failed(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// invalid is a result for input that does not fit the tool's schema.
func invalid(tool string, err error) Result {
	return failed("invalid input for %s: %v", tool, err)
}
