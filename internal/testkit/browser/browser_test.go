package browser

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
)

// page has a button whose click posts to /hit and writes the server's
// answer into #out, then adds #done: the test can only pass if the click
// really ran the page's script and reached the server.
const page = `<!doctype html>
<html><head><title>browser kit</title></head>
<body style="background:#fff">
<button id="go">go</button>
<p id="out">idle</p>
<script>
document.getElementById("go").addEventListener("click", async () => {
  const r = await fetch("/hit", {method: "POST"});
  document.getElementById("out").textContent = "clicked: " + await r.text();
  const d = document.createElement("p");
  d.id = "done";
  d.textContent = "done";
  document.body.appendChild(d);
});
</script>
</body></html>`

func TestClickChangesThePage(t *testing.T) {
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("POST /hit", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hit %d", hits.Add(1))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	artifacts := os.Getenv(EnvArtifacts)
	if artifacts == "" {
		artifacts = t.TempDir()
		t.Setenv(EnvArtifacts, artifacts)
	}

	ctx, stop := Start(t)
	defer stop()
	Do(t, ctx, "opening the page", chromedp.Navigate(srv.URL))
	if got := Get(t, ctx, "reading #out", chromedp.Text(chromedp.ID("out"))); got != "idle" {
		t.Fatalf("before the click #out = %q, want idle", got)
	}
	if n := Get(t, ctx, "counting #done", chromedp.Evaluate[int](`document.querySelectorAll("#done").length`)); n != 0 {
		t.Fatalf("#done present before the click")
	}
	Do(t, ctx, "clicking go and waiting for #done",
		chromedp.Click(chromedp.ID("go")),
		chromedp.WaitVisible(chromedp.ID("done")),
	)
	if got := Get(t, ctx, "reading #out", chromedp.Text(chromedp.ID("out"))); got != "clicked: hit 1" {
		t.Errorf("after the click #out = %q, want %q", got, "clicked: hit 1")
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("server saw %d hits, want 1", n)
	}

	path := Screenshot(t, ctx, "after click")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decoding the screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("screenshot is %dx%d, want a page-sized image", b.Dx(), b.Dy())
	}
	kept, err := os.ReadFile(filepath.Join(artifacts, artifactName(t.Name(), "after click")))
	if err != nil {
		t.Fatalf("screenshot not kept in $%s: %v", EnvArtifacts, err)
	}
	if !bytes.Equal(kept, data) {
		t.Errorf("the kept screenshot differs from the saved one")
	}

	stop()
	stop() // idempotent
}

func TestMissingChromiumSkipsOnlyOutsideCI(t *testing.T) {
	for _, tc := range []struct {
		ci   string
		skip bool
	}{
		{"", true}, {"false", true}, {"0", true}, {"true", false}, {"1", false}, {"yes", false},
	} {
		skip, why := missing("/nowhere/chromium", tc.ci)
		if skip != tc.skip {
			t.Errorf("CI=%q: skip = %v, want %v", tc.ci, skip, tc.skip)
		}
		if !strings.Contains(why, "/nowhere/chromium") || !strings.Contains(why, EnvPath) {
			t.Errorf("CI=%q: reason %q does not name the path and %s", tc.ci, why, EnvPath)
		}
	}
}

func TestPathHonoursTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "chromium")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPath, exe)
	if p, ok := Path(); p != exe || !ok {
		t.Errorf("Path() = %q, %v; want %q, true", p, ok, exe)
	}
	t.Setenv(EnvPath, filepath.Join(dir, "absent"))
	if _, ok := Path(); ok {
		t.Errorf("Path() found an absent file")
	}
	if err := os.WriteFile(filepath.Join(dir, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPath, filepath.Join(dir, "plain"))
	if _, ok := Path(); ok {
		t.Errorf("Path() accepted a file that is not executable")
	}
}

func TestArtifactNameIsSafe(t *testing.T) {
	if got, want := artifactName("TestX/sub case", "../fleet view"), "TestX_sub_case-.._fleet_view.png"; got != want {
		t.Errorf("artifactName = %q, want %q", got, want)
	}
}
