package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
	"github.com/neuraphage/neuraphage-go/internal/testkit/browser"
	"github.com/neuraphage/neuraphage-go/internal/web"
)

// TestBrowserFleet drives the dashboard in a real headless Chromium: sign
// in with the one-time link, see tasks created afterwards appear live,
// answer a waiting task and pause another from the fleet, and check that
// the daemon acted; the fleet view is kept as a screenshot.
func TestBrowserFleet(t *testing.T) {
	f := newFixture(t, web.Options{})
	waiting := f.create(t, "asks a question", task.Running, task.Waiting)
	ctx, stop := browser.Start(t)
	defer stop()
	row := func(id task.ID) string { return "#row-" + string(id) }

	browser.Do(t, ctx, "signing in with the one-time link",
		chromedp.Navigate(f.srv.URL+f.web.Login()),
		chromedp.WaitVisible(chromedp.CSS(row(waiting))),
	)
	if loc := browser.Get(t, ctx, "reading the address", chromedp.Location()); loc != f.srv.URL+"/" {
		t.Errorf("after sign-in the address is %q, want the token gone (%s/)", loc, f.srv.URL)
	}
	paint := browser.Get(t, ctx, "reading the first paint", chromedp.Evaluate[float64](
		`(performance.getEntriesByName("first-contentful-paint")[0] || {startTime: -1}).startTime`))
	t.Logf("fleet page: first contentful paint at %.0f ms after navigation (one task)", paint)
	browser.Do(t, ctx, "waiting for the live stream", chromedp.WaitVisible(chromedp.CSS("#live")))

	// Tasks created after the page opened appear without a reload.
	var later []task.ID
	for i := range 3 {
		later = append(later, f.create(t, fmt.Sprintf("scripted task %d", i)))
	}
	for _, id := range later {
		browser.Do(t, ctx, "waiting for "+string(id)+" to appear live", chromedp.WaitVisible(chromedp.CSS(row(id))))
	}

	// Answer the waiting task from its row.
	browser.Do(t, ctx, "answering "+string(waiting),
		chromedp.SendKeys(chromedp.CSS(row(waiting)+" input[name=text]"), "Blue, like the logo."),
		chromedp.Click(chromedp.CSS(row(waiting)+" form.answer button")),
		chromedp.WaitVisible(chromedp.CSS("#flash .flash")),
	)
	if got := browser.Get(t, ctx, "reading the outcome", chromedp.Text(chromedp.CSS("#flash"))); !containsAll(got, "answer #", string(waiting)) {
		t.Errorf("after answering, #flash says %q", got)
	}
	d, err := f.c.GetTask(context.Background(), string(waiting))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pending) != 1 || d.Pending[0].Text != "Blue, like the logo." {
		t.Errorf("the waiting task's queue holds %+v, want the answer", d.Pending)
	}

	// Pause another; its row turns paused live (the SSE stream).
	target := later[1]
	browser.Do(t, ctx, "pausing "+string(target),
		chromedp.Click(chromedp.CSS(row(target)+" button.pause")),
		chromedp.WaitVisible(chromedp.CSS(row(target)+`[data-status="paused"]`)),
	)
	testkit.WaitFor(t, "the daemon pauses "+string(target), func() bool {
		d, err := f.c.GetTask(context.Background(), string(target))
		return err == nil && d.Task.Status == task.Paused
	})
	path := browser.Screenshot(t, ctx, "fleet")
	t.Logf("fleet screenshot: %s", path)
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
