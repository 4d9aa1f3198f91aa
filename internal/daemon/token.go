package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// writeToken makes a new random API token and writes it to file (mode
// 0600, replaced atomically so a client never reads half of it). It is
// written before the socket listens, so a client that reaches this daemon
// reads this daemon's token.
func writeToken(file string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the API token: %w", err)
	}
	token := hex.EncodeToString(b)
	f, err := os.CreateTemp(filepath.Dir(file), ".api.token-*")
	if err != nil {
		return "", fmt.Errorf("writing the API token: %w", err)
	}
	_, err = f.WriteString(token + "\n")
	if err == nil {
		err = f.Chmod(0o600)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), file)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing the API token %s: %w", file, err)
	}
	return token, nil
}
