package browser

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// artifactName is the file name of screenshot name of test test:
// "<test>-<name>.png", with anything outside [A-Za-z0-9._-] replaced.
func artifactName(test, name string) string {
	clean := func(s string) string { return strings.Trim(unsafeName.ReplaceAllString(s, "_"), "_") }
	return clean(test) + "-" + clean(name) + ".png"
}

// Screenshot saves a full-page PNG of ctx's page as a test artifact and
// returns its path: in t.TempDir(), and copied to $NEURAPHAGE_ARTIFACTS
// (created when missing) when that is set, so CI can keep it. It fails the
// test when the browser returns no PNG or a file cannot be written.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	img := Get(t, ctx, "taking screenshot "+name, chromedp.FullScreenshot(100))
	if !bytes.HasPrefix(img, pngSignature) {
		t.Fatalf("taking screenshot %s: %v (%d bytes)", name, errNotPNG, len(img))
	}
	file := artifactName(t.Name(), name)
	path := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatalf("saving screenshot %s: %v", name, err)
	}
	if dir := os.Getenv(EnvArtifacts); dir != "" {
		kept, err := keep(dir, file, img)
		if err != nil {
			t.Fatalf("keeping screenshot %s in $%s: %v", name, EnvArtifacts, err)
		}
		t.Logf("screenshot %s kept at %s", name, kept)
	}
	return path
}

// keep writes img as dir/file, creating dir.
func keep(dir, file string, img []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, img, 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}
