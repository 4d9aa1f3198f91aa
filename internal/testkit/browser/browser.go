// Package browser drives a real headless Chromium from Go tests through the
// DevTools protocol (github.com/chromedp/chromedp): Start launches Debian's
// chromium (or $NEURAPHAGE_CHROMIUM) with a fresh profile and returns a
// context the chromedp actions run in; Do runs actions with a bounded
// deadline and fails the test on error; Screenshot keeps a PNG of the page
// as a test artifact.
//
// A test is skipped, saying why, only when chromium is missing and $CI is
// unset: under CI (.ci/run installs chromium) a missing browser fails the
// test, so browser tests cannot silently stop running. It is for tests only.
package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// DefaultPath is where Debian's chromium package puts the browser.
const DefaultPath = "/usr/bin/chromium"

// EnvPath names another chromium executable; EnvArtifacts a directory that
// screenshots are copied to (CI keeps it).
const (
	EnvPath      = "NEURAPHAGE_CHROMIUM"
	EnvArtifacts = "NEURAPHAGE_ARTIFACTS"
)

// StepLimit bounds one Do: generous, so a loaded machine never trips it;
// reaching it means the page will not get there (a click that did nothing,
// an element that never appears).
const StepLimit = 60 * time.Second

// Path returns the chromium executable to use: $NEURAPHAGE_CHROMIUM when
// set, else DefaultPath; and whether it exists as an executable file.
func Path() (string, bool) {
	p := os.Getenv(EnvPath)
	if p == "" {
		p = DefaultPath
	}
	fi, err := os.Stat(p)
	return p, err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// underCI reports whether $CI asks for CI behaviour: any value but "",
// "0" and "false".
func underCI(v string) bool {
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// missing says what to do when the browser at path is absent: skip (with
// why) outside CI, fail under CI.
func missing(path, ci string) (skip bool, why string) {
	why = fmt.Sprintf("chromium not found at %s (install Debian's chromium package, or set %s)", path, EnvPath)
	if underCI(ci) {
		return false, why + "; CI=" + ci + " requires it"
	}
	return true, why
}

// Start launches a headless chromium for t and returns a chromedp context
// with a browser already running, and a stop function that closes the
// browser and removes its profile directory. Stop is idempotent and is also
// registered with t.Cleanup, so calling it is optional. Give each action a
// deadline (Do does); never put one on the returned context itself, which
// would stop the browser.
func Start(t testing.TB) (context.Context, func()) {
	t.Helper()
	path, ok := Path()
	if !ok {
		skip, why := missing(path, os.Getenv("CI"))
		if skip {
			t.Skip("skipping: " + why)
		}
		t.Fatal(why)
	}
	profile, err := os.MkdirTemp("", "neuraphage-chromium-")
	if err != nil {
		t.Fatalf("making the browser profile directory: %v", err)
	}
	out := &lockedBuffer{}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(out),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to start its sandbox as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithErrorf(func(format string, args ...any) {
		t.Logf("chromium: "+format, args...)
	}))
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancelTab()
			cancelAlloc() // waits for the browser process to exit
			if err := removeProfile(profile); err != nil {
				t.Logf("removing the browser profile %s: %v", profile, err)
			}
		})
	}
	t.Cleanup(stop)

	// Start the browser now, with no deadline on ctx (one would stop it),
	// bounded instead by a timer that cancels the start.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	timer := time.NewTimer(StepLimit)
	defer timer.Stop()
	select {
	case err = <-started:
	case <-timer.C:
		stop()
		err = <-started
		err = fmt.Errorf("not started within %s (%v)", StepLimit, err)
	}
	if err != nil {
		stop()
		t.Fatalf("starting chromium %s: %v\nits output:\n%s", path, err, tail(out.String(), 4000))
	}
	return ctx, stop
}

// Do runs actions in order on ctx (a context from Start) with a deadline of
// StepLimit, and fails the test, naming what, at the first error.
func Do(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, StepLimit)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Get runs one action that returns a value, with Do's deadline and failure.
func Get[T any](t testing.TB, ctx context.Context, what string, action chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, StepLimit)
	defer cancel()
	v, err := chromedp.Run(sctx, action)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// removeProfile removes the profile directory; chromium's child processes
// can still write in it for a moment after the browser exits, so a
// "directory not empty" is tried again, a bounded number of times.
func removeProfile(dir string) error {
	var err error
	for range 50 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// lockedBuffer collects the browser's output, written from chromedp's
// goroutine and read on failure.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// errNotPNG is returned when the browser's screenshot is not a PNG image.
var errNotPNG = errors.New("the screenshot is not a PNG image")
