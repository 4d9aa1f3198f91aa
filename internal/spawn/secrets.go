package spawn

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/neuraphage/neuraphage-go/internal/proc"
)

// SecretsFDEnv names the variable that tells a daemon which inherited file
// descriptor carries the variables held back from its exec-time environment.
const SecretsFDEnv = "NEURAPHAGE_SECRETS_FD"

// maxSecrets bounds what is handed over: it is written into a pipe before
// the reader runs, so it must fit the pipe's buffer (64 KiB on Linux).
const maxSecrets = 60 << 10

// Secrets splits env ("NAME=value" entries) into what may stay in a
// process's exec-time environment and what is held back: the [proc.Secret]
// variables (provider keys, tokens, NEURAPHAGE_*) and the names in extra (the
// configured api_key_env variables). The kernel shows a process's exec-time
// environment in /proc/<pid>/environ for as long as it runs, to any process
// of the same user that the kernel lets read it.
func Secrets(env, extra []string) (keep, held []string) {
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == SecretsFDEnv:
		case proc.Secret(name) || containsName(extra, name):
			held = append(held, kv)
		default:
			keep = append(keep, kv)
		}
	}
	return keep, held
}

func containsName(names []string, name string) bool {
	for _, n := range names {
		if n != "" && n == name {
			return true
		}
	}
	return false
}

// handOver writes held into a new pipe and returns its read end, which
// carries them, NUL-separated, to the process that inherits it.
func handOver(held []string) (*os.File, error) {
	data := []byte(strings.Join(held, "\x00"))
	if len(data) > maxSecrets {
		return nil, fmt.Errorf("the secret variables of the environment take %d bytes, more than the %d that can be handed to the daemon", len(data), maxSecrets)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("making a pipe for the daemon's secret variables: %w", err)
	}
	_, err = w.Write(data)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("handing the secret variables to the daemon: %w", err)
	}
	return r, nil
}

// ReceiveSecrets, called first thing by a program that [Detached] or
// [HideSecrets] may have started, reads the secret variables handed over on
// the descriptor SecretsFDEnv names and sets them with os.Setenv, so the
// process has them in its in-process environment (os.Getenv) but not in its
// exec-time one. Without SecretsFDEnv it does nothing.
func ReceiveSecrets() error {
	fd := os.Getenv(SecretsFDEnv)
	if fd == "" {
		return nil
	}
	return receive(fd)
}

// HideSecrets makes sure the calling process (a daemon about to run) does not
// carry secret variables in its exec-time environment: when its environment
// holds any (see [Secrets]; extra names more), it re-executes exe with argv
// (the same program, the same process id) with them removed from its
// environment and handed over through a pipe, for [ReceiveSecrets] in the
// new image to set again. It returns only if that fails or when there is
// nothing to hide.
func HideSecrets(exe string, argv, extra []string) error {
	// What the kernel shows is the exec-time environment; a process that
	// received its secrets has them only in its in-process one.
	if b, err := os.ReadFile("/proc/self/environ"); err == nil {
		if _, exposed := Secrets(strings.Split(string(b), "\x00"), extra); len(exposed) == 0 {
			return nil
		}
	}
	keep, held := Secrets(os.Environ(), extra)
	if len(held) == 0 {
		return nil
	}
	r, err := handOver(held)
	if err != nil {
		return err
	}
	defer r.Close()
	// The read end survives the exec: clear its close-on-exec flag.
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), syscall.F_SETFD, 0); errno != 0 {
		return fmt.Errorf("handing the secret variables over: %w", errno)
	}
	env := append(keep, SecretsFDEnv+"="+strconv.Itoa(int(r.Fd())))
	if err := syscall.Exec(exe, argv, env); err != nil {
		return fmt.Errorf("re-executing %s without the secret variables in its environment: %w", exe, err)
	}
	return nil
}

// receive reads the variables handed over on descriptor fd and sets them.
func receive(fd string) error {
	os.Unsetenv(SecretsFDEnv)
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return fmt.Errorf("%s=%q is not an inherited file descriptor", SecretsFDEnv, fd)
	}
	f := os.NewFile(uintptr(n), "secrets")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecrets+1))
	if err != nil {
		return fmt.Errorf("reading the secret variables handed over on descriptor %d: %w", n, err)
	}
	if len(data) == 0 {
		return nil
	}
	for kv := range bytes.SplitSeq(data, []byte{0}) {
		name, value, ok := strings.Cut(string(kv), "=")
		if !ok || name == "" {
			return fmt.Errorf("the secret variables handed over on descriptor %d are malformed", n)
		}
		if err := os.Setenv(name, value); err != nil {
			return fmt.Errorf("setting %s: %w", name, err)
		}
	}
	return nil
}
