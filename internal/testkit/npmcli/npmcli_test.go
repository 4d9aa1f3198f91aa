package npmcli

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

func TestOfflineOutput(t *testing.T) {
	t.Parallel()
	for out, want := range map[string]bool{
		"npm error code ENOTFOUND\nnpm error syscall getaddrinfo":                          true,
		"npm error code ECONNREFUSED":                                                      true,
		"npm error network request to https://registry.npmjs.org/x failed, reason: socket": true,
		"npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/x":  false,
		"npm error code ETARGET\nnpm error notarget No matching version found":             false,
	} {
		if got := offline(out); got != want {
			t.Errorf("offline(%q) = %t, want %t", out, got, want)
		}
	}
}

func TestBadArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][3]string{{"", "1", "x"}, {"p", "", "x"}, {"p", "1", ""}, {"p", "1 2", "x"}, {"p", "1", "../x"}} {
		if _, err := install(t.Context(), args[0], args[1], args[2]); err == nil {
			t.Errorf("install%q succeeded", args)
		}
	}
}

// TestUnreachableRegistry must not run in parallel: it points the cache and
// npm's registry elsewhere through the environment.
func TestUnreachableRegistry(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("npm_config_registry", "http://127.0.0.1:1/")
	t.Setenv("npm_config_fetch_retries", "0")
	t.Setenv("npm_config_cache", t.TempDir())
	_, err := install(t.Context(), "left-pad", "1.3.0", "left-pad")
	var u *unreachable
	if !errors.As(err, &u) {
		t.Fatalf("install with an unreachable registry = %v, want the unreachable error that skips", err)
	}
	// Nothing half-made is left in the cache.
	cache, _ := CacheDir()
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".lock" {
			t.Errorf("cache holds %s after a failed install", e.Name())
		}
	}
}

// TestLockSerialises: holders of the lock never overlap.
func TestLockSerialises(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.lock")
	var mu sync.Mutex
	inside := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			unlock, err := lock(path)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside++
			n := inside
			mu.Unlock()
			runtime.Gosched() // leave room for another holder to come in
			mu.Lock()
			inside--
			mu.Unlock()
			unlock()
			if n != 1 {
				t.Errorf("%d holders at once", n)
			}
		})
	}
	wg.Wait()
}
