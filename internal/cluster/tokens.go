package cluster

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Token prefix: a worker's token is np1.<worker>.<secret>.
const tokenPrefix = "np1."

var workerName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// Tokens is the coordinator's list of worker tokens, kept in a file (0600)
// with the secrets hashed. Safe for concurrent use.
type Tokens struct {
	path string
	mu   sync.Mutex
	m    map[string]tokenEntry // by worker
}

type tokenEntry struct {
	Hash   string            `json:"hash"`
	Labels map[string]string `json:"labels,omitempty"`
}

// OpenTokens reads the token file at path (missing: none yet).
func OpenTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path, m: map[string]tokenEntry{}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return t, nil
	case err != nil:
		return nil, err
	}
	if err := json.Unmarshal(b, &t.m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Issue makes a fresh token for a new worker, restricted to labels when
// any are given, and stores it.
func (t *Tokens) Issue(labels map[string]string) (worker, token string, err error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	var w [4]byte
	if _, err := rand.Read(w[:]); err != nil {
		return "", "", err
	}
	worker = "w" + hex.EncodeToString(w[:])
	secret := hex.EncodeToString(b[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[worker] = tokenEntry{Hash: hash(secret), Labels: labels}
	if err := t.save(); err != nil {
		delete(t.m, worker)
		return "", "", err
	}
	return worker, tokenPrefix + worker + "." + secret, nil
}

// Check returns the worker a token names and the labels it may declare,
// or ok false for a token it does not know.
func (t *Tokens) Check(token string) (worker string, labels map[string]string, ok bool) {
	worker, secret, err := SplitToken(token)
	if err != nil {
		return "", nil, false
	}
	t.mu.Lock()
	e, found := t.m[worker]
	t.mu.Unlock()
	if !found || subtle.ConstantTimeCompare([]byte(e.Hash), []byte(hash(secret))) != 1 {
		return "", nil, false
	}
	return worker, e.Labels, true
}

// lookup returns the labels of a worker's token.
func (t *Tokens) lookup(worker string) (string, map[string]string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[worker]
	return worker, e.Labels, ok
}

// SplitToken returns the worker a token names and its secret.
func SplitToken(token string) (worker, secret string, err error) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return "", "", errors.New("not a worker token (np1.<worker>.<secret>)")
	}
	worker, secret, ok = strings.Cut(rest, ".")
	if !ok || !workerName.MatchString(worker) || len(secret) < 16 {
		return "", "", errors.New("not a worker token (np1.<worker>.<secret>)")
	}
	return worker, secret, nil
}

func (t *Tokens) save() error {
	b, err := json.MarshalIndent(t.m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return err
	}
	tmp := t.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, t.path)
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
