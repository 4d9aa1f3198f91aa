package npmcli

import (
	"context"
	"errors"
)

// Ensure is Install for a caller without a test (a script's condition):
// it returns the executable's path; or skip, saying why, when npm is
// missing or cannot reach the registry; or any other error.
func Ensure(ctx context.Context, pkg, version, bin string) (path, skip string, err error) {
	path, err = install(ctx, pkg, version, bin)
	var u *unreachable
	if errors.As(err, &u) {
		return "", u.why, nil
	}
	return path, "", err
}
