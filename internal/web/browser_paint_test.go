package web_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit/browser"
	"github.com/neuraphage/neuraphage-go/internal/web"
)

// createMany makes n tasks through the tasks service, many at once (as
// `dev load --held` does, so the store commits them in groups), a quarter
// each queued, running, waiting and paused; it returns their IDs in order.
func (f *fixture) createMany(tb testing.TB, n int) []task.ID {
	tb.Helper()
	const callers = 16
	paths := [][]task.Status{nil, {task.Running}, {task.Running, task.Waiting}, {task.Running, task.Paused}}
	ids := make([]task.ID, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for i := range next {
				ids[i], errs[i] = f.createErr(fmt.Sprintf("task %d: fix the flaky test in pkg/%d", i, i), paths[i%len(paths)]...)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatalf("creating %d tasks: %v", n, err)
	}
	return ids
}

// createErr is create for other goroutines than the test's: it returns
// the error instead of failing the test.
func (f *fixture) createErr(desc string, to ...task.Status) (task.ID, error) {
	ctx := context.Background()
	tk, err := f.svc.Create(ctx, task.Spec{Description: desc})
	if err != nil {
		return "", err
	}
	for _, s := range to {
		reason := ""
		if s == task.Waiting {
			reason = "Which colour should the banner be?"
		}
		if _, _, err := f.st.UpdateTask(ctx, tk.ID, store.Transition(s, reason, time.Now())); err != nil {
			return "", fmt.Errorf("moving %s to %s: %w", tk.ID, s, err)
		}
	}
	return tk.ID, nil
}

// paint is what a page load of the fleet measured in the browser: first
// contentful paint and the end of DOMContentLoaded, in milliseconds after
// the navigation started, and the fleet's rows in the document.
type paint struct {
	FCP  float64 `json:"fcp"`
	DCL  float64 `json:"dcl"`
	Rows int     `json:"rows"`
}

// paintJS waits for the first contentful paint entry and the end of
// DOMContentLoaded of the current document, then reads them with the rows.
const paintJS = `(() => {
  const p = performance.getEntriesByName("first-contentful-paint")[0];
  const n = performance.getEntriesByType("navigation")[0];
  if (!p || !n || !n.domContentLoadedEventEnd) { return null; }
  return {fcp: p.startTime, dcl: n.domContentLoadedEventEnd,
    rows: document.querySelectorAll("#fleet-body > tr[id^='row-']").length};
})()`

// BenchmarkBrowserFirstPaint500 is the fleet page with 500 tasks held in
// the daemon, loaded in a real headless Chromium: each iteration is a new
// navigation to the fleet (API reads, render, transfer, parse, paint); it
// reports the first contentful paint and DOMContentLoaded as the browser's
// paint and navigation timing entries give them. It asserts no timing, only
// that the 500 rows are on the page.
func BenchmarkBrowserFirstPaint500(b *testing.B) {
	const n = 500
	f := newFixture(b, web.Options{})
	ids := f.createMany(b, n)
	ctx, stop := browser.Start(b)
	defer stop()
	browser.Do(b, ctx, "signing in with the one-time link",
		chromedp.Navigate(f.srv.URL+f.web.Login()),
		chromedp.WaitVisible(chromedp.CSS("#fleet-body")),
	)
	var fcp, dcl float64
	loads := 0
	for b.Loop() {
		browser.Do(b, ctx, "opening the fleet", chromedp.Navigate(f.srv.URL+"/"))
		p := browser.Get(b, ctx, "reading the paint timing", chromedp.Poll[paint](paintJS,
			chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(browser.StepLimit)))
		if p.Rows != n {
			b.Fatalf("the fleet shows %d rows, want %d", p.Rows, n)
		}
		fcp += p.FCP
		dcl += p.DCL
		loads++
	}
	b.StopTimer()
	for _, id := range []task.ID{ids[0], ids[n/2], ids[n-1]} {
		if k := browser.Get(b, ctx, "finding "+string(id), chromedp.Evaluate[int](
			fmt.Sprintf(`document.querySelectorAll("#row-%s").length`, id))); k != 1 {
			b.Fatalf("row %s is on the page %d times, want once", id, k)
		}
	}
	b.ReportMetric(fcp/float64(loads), "ms-fcp")
	b.ReportMetric(dcl/float64(loads), "ms-dcl")
}

// phoneJS measures the page at the phone's width: the document's and each
// scroll box's horizontal overflow, and the buttons (outside a closed
// details) that are not wholly on screen horizontally or have no size.
const phoneJS = `(() => {
  const w = window.innerWidth;
  const doc = document.scrollingElement;
  const boxes = [...document.querySelectorAll(".scroll")]
    .filter(e => e.scrollWidth > e.clientWidth)
    .map(e => e.className + " " + e.scrollWidth + ">" + e.clientWidth);
  const hidden = [...document.querySelectorAll("main button")]
    .filter(btn => { const r = btn.getBoundingClientRect();
      return r.width === 0 || r.height === 0 || r.left < 0 || r.right > w; })
    .map(btn => btn.textContent.trim() + " " + Math.round(btn.getBoundingClientRect().right));
  return {inner: w, scroll: doc.scrollWidth, boxes: boxes, hidden: hidden,
    buttons: document.querySelectorAll("main button").length};
})()`

type phoneLayout struct {
	Inner   int      `json:"inner"`
	Scroll  int      `json:"scroll"`
	Boxes   []string `json:"boxes"`
	Hidden  []string `json:"hidden"`
	Buttons int      `json:"buttons"`
}

// TestBrowserPhone opens the fleet and a task at a phone's viewport
// (390×844, mobile, touch) in a real headless Chromium: neither page may
// scroll sideways, nor any scroll box in it, and every action button must
// be wholly on screen. Task text is long, with unbroken words, to push the
// layout. Both views are kept as screenshots.
func TestBrowserPhone(t *testing.T) {
	f := newFixture(t, web.Options{})
	long := "refactor_the_configuration_loader_so_that_every_key_is_validated_before_use " + strings.Repeat("and keep the old keys working ", 6)
	waiting := f.create(t, long, task.Running, task.Waiting)
	running := f.create(t, "run the migration on "+strings.Repeat("x", 120), task.Running)
	paused := f.create(t, "a paused task", task.Running, task.Paused)
	ctx, stop := browser.Start(t)
	defer stop()
	browser.Do(t, ctx, "emulating a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch))

	check := func(what string, wantButtons int) {
		t.Helper()
		l := browser.Get(t, ctx, "measuring "+what, chromedp.Evaluate[phoneLayout](phoneJS))
		if l.Inner != 390 {
			t.Errorf("%s: the viewport is %d CSS pixels wide, want 390 (a page zoomed out to fit is too wide)", what, l.Inner)
		}
		if l.Scroll > l.Inner {
			t.Errorf("%s: the page is %d pixels wide in a viewport of %d: it scrolls sideways", what, l.Scroll, l.Inner)
		}
		if len(l.Boxes) > 0 {
			t.Errorf("%s: scroll boxes wider than the screen: %v", what, l.Boxes)
		}
		if len(l.Hidden) > 0 {
			t.Errorf("%s: buttons not wholly on screen (text, right edge): %v", what, l.Hidden)
		}
		if l.Buttons < wantButtons {
			t.Errorf("%s: %d buttons on the page, want at least %d", what, l.Buttons, wantButtons)
		}
		browser.Screenshot(t, ctx, what)
	}

	browser.Do(t, ctx, "signing in with the one-time link",
		chromedp.Navigate(f.srv.URL+f.web.Login()),
		chromedp.WaitVisible(chromedp.CSS("#row-"+string(waiting)+" form.answer button")),
		chromedp.WaitVisible(chromedp.CSS("#row-"+string(running)+" button.pause")),
		chromedp.WaitVisible(chromedp.CSS("#row-"+string(paused)+" button.resume")),
	)
	check("phone fleet", 3) // answer, pause (the running and the waiting task), resume

	browser.Do(t, ctx, "opening the waiting task",
		chromedp.Navigate(f.srv.URL+"/tasks/"+string(waiting)),
		chromedp.WaitVisible(chromedp.CSS("form.actions button.danger")),
	)
	check("phone task", 9) // answer, send, urgent send, nudge; pause, resume, escalate, merge retry, cancel
}
