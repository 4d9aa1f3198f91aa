package gitserve_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/gitserve"
)

// TestGzipUploadRequest: a fetch whose request git compressed (it does for
// requests over 1 KiB) is served: the pack comes back.
func TestGzipUploadRequest(t *testing.T) {
	t.Parallel()
	c := newCluster(t, false)
	c.assign(task, "w1", 1)
	main := c.git(c.repo, "", "rev-parse", "main")
	var body bytes.Buffer
	z := gzip.NewWriter(&body)
	io.WriteString(z, pktLine("want "+main+" side-band-64k ofs-delta\n")+"0000"+pktLine("done\n"))
	z.Close()
	req, err := http.NewRequest(http.MethodPost, gitserve.TaskURL(c.base, task, 1)+"/git-upload-pack", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token1)
	req.Header.Set("Content-Type", "application/x-git-upload-pack-request")
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := c.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-git-upload-pack-result" {
		t.Fatalf("status %d, type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), out)
	}
	if !strings.Contains(string(out), "PACK") {
		t.Fatalf("no pack in the answer: %q", out)
	}

	// Asking for a commit no shown ref reaches is refused by upload-pack.
	c.git(c.repo, "", "checkout", "--quiet", "private")
	hidden := c.commit(c.repo, "h.txt", "hidden\n")
	c.git(c.repo, "", "checkout", "--quiet", "main")
	body.Reset()
	z = gzip.NewWriter(&body)
	io.WriteString(z, pktLine("want "+hidden+" side-band-64k\n")+"0000"+pktLine("done\n"))
	z.Close()
	req, _ = http.NewRequest(http.MethodPost, gitserve.TaskURL(c.base, task, 1)+"/git-upload-pack", &body)
	req.Header.Set("Authorization", "Bearer "+token1)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err = c.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ = io.ReadAll(resp.Body)
	if strings.Contains(string(out), "PACK") || !strings.Contains(string(out), "not our ref") {
		t.Fatalf("asking for a hidden commit: %q, want upload-pack's \"not our ref\"", out)
	}
}
