package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Probe asks the kernel which Landlock ABI it offers.
func Probe() Status {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case err == nil && v > 0:
		return Status{ABI: v}
	case errors.Is(err, syscall.ENOSYS):
		return Status{Reason: "kernel lacks Landlock"}
	case errors.Is(err, syscall.EOPNOTSUPP):
		return Status{Reason: "Landlock is turned off in the kernel (see the lsm= boot parameter)"}
	case err != nil:
		return Status{Reason: "probing Landlock: " + err.Error()}
	}
	return Status{Reason: "kernel lacks Landlock"}
}

// presets are go-landlock's configurations by ABI, [0] unused.
var presets = []landlock.Config{{}, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// Rights by kind, before masking with what the ABI handles.
const (
	fileRead  = ll.AccessFSExecute | ll.AccessFSReadFile
	dirRead   = fileRead | ll.AccessFSReadDir
	fileWrite = fileRead | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// config is the Landlock configuration of policy p on ABI abi: every
// filesystem right the ABI knows, TCP when the policy restricts the network
// (an error before ABI v4 unless p.Degrade), signals always scoped, abstract
// UNIX sockets scoped with the network.
func (p Policy) config(abi int) (landlock.Config, error) {
	abi = min(abi, len(presets)-1)
	cfg := presets[abi]
	// UDP is left alone on every ABI (see the package doc), and with it
	// the network when the policy allows it.
	cfg.HandledAccessNet &= ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	cfg.Scoped &= ll.ScopeSignal
	if !p.Network.Allows() {
		if abi < TCP && !p.Degrade {
			return cfg, fmt.Errorf("network %s needs Landlock ABI v%d (Linux 6.7); this kernel has v%d", p.Network, TCP, abi)
		}
		cfg.Scoped |= presets[abi].Scoped & ll.ScopeAbstractUnixSocket
	} else {
		cfg.HandledAccessNet = 0
	}
	return cfg, nil
}

// rules are the grants of p under cfg.
func (p Policy) rules(cfg landlock.Config) []landlock.Rule {
	handled := cfg.HandledAccessFS
	var rules []landlock.Rule
	add := func(rights landlock.AccessFSSet, paths ...string) {
		if len(paths) > 0 && rights&handled != 0 {
			rules = append(rules, landlock.PathAccess(rights&handled, paths...).IgnoreIfMissing())
		}
	}
	g := ReadGrants(p.DenyRead)
	read := landlock.AccessFSSet(dirRead)
	if p.Network.Allows() {
		read |= ll.AccessFSResolveUnix // connecting to UNIX sockets where it may read (ABI v9)
	}
	add(read, g.Dirs...)
	add(fileRead, g.Files...)
	add(ll.AccessFSReadDir, g.Listed...)
	add(fileWrite, devices...)
	for _, w := range p.Write {
		if fi, err := os.Stat(w); err == nil && !fi.IsDir() {
			add(fileWrite, w)
			continue
		}
		add(handled, w) // everything, refer (moving between writable directories) included
	}
	// Loose objects only: no refer, so nothing (a pack among them) can be
	// linked or moved in from elsewhere and then written through.
	add(handled&^ll.AccessFSRefer, LooseDirs(p.Objects)...)
	for _, port := range p.Network.Ports {
		if cfg.HandledAccessNet != 0 {
			rules = append(rules, landlock.ConnectTCP(port), landlock.BindTCP(port))
		}
	}
	return rules
}

// devices are the character devices a shell writes to.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// Apply restricts the calling thread, and what it executes, to p. It locks
// the goroutine to its thread for good: call it just before syscall.Exec,
// never in a process that goes on running Go code (such as the daemon).
// Without Landlock it returns ErrUnavailable and restricts nothing.
func (p Policy) Apply() error {
	st := Probe()
	if !st.Available() {
		return fmt.Errorf("%w: %s", ErrUnavailable, st.Reason)
	}
	cfg, err := p.config(st.ABI)
	if err != nil {
		return err
	}
	fd, flags, err := cfg.NewRulesetFD(p.rules(cfg)...)
	if err != nil {
		return fmt.Errorf("building the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("building the Landlock ruleset: nothing to restrict")
	}
	defer unix.Close(fd)
	runtime.LockOSThread() // never unlocked: only this thread is restricted
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("enforcing the Landlock ruleset: %w", err)
	}
	return nil
}

// dieWithParent has the kernel kill the program about to be executed when
// the daemon that started it dies, as proc starts every command. The
// setting the daemon gave the launcher belongs to the thread it started
// on, and execve from another thread (Apply's, locked) does not carry it;
// so it is set again on the executing thread, then the parent is checked
// to be the one that started the launcher, in case it died in between.
func dieWithParent(parent int) error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("setting the parent-death signal: %w", err)
	}
	if os.Getppid() != parent {
		return errors.New("the daemon that started this command is gone")
	}
	return nil
}
