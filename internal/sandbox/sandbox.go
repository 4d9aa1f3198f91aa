// Package sandbox confines the commands a task runs with Linux Landlock, so a
// command cannot reach what is not its task's: it writes only where the task
// may write, reads everything but the configured secret locations, and
// reaches the network as the policy says.
//
// The daemon itself is never restricted. A command is run through a small
// launcher instead: the neuraphage binary re-executed as
//
//	neuraphage sandbox-exec [flags] -- prog args...
//
// which applies the Policy to itself ([Exec]) and then execve's the program:
// the same process, so its process group, parent-death signal and timeouts
// (internal/proc) work as for any other command. [Launcher.Wrap] turns a
// proc.Cmd into its sandboxed form; the bash tool runs every command through
// it, and the external agent CLIs are meant to.
//
// # Writes
//
// Writable are: the task's worktree, its own temporary directory (TMPDIR,
// private to the task), the character devices a shell needs (/dev/null,
// /dev/zero, /dev/full, /dev/tty), the paths the user adds (sandbox.write),
// and exactly what git needs to commit in a linked worktree (see
// [GitWrites]): the worktree's own git directory (<repo>/.git/worktrees/<name>:
// its index, HEAD, logs), the loose objects of the task's own object
// directory (<repo>/.git/neuraphage/objects/<id>, its fan-out directories
// 00..ff, see [Policy].Objects and [ProvideObjects]; every command gets
// GIT_OBJECT_DIRECTORY naming it), and the directory of the task's own
// branch's ref and reflog (refs/heads/neuraphage/<id> and
// logs/refs/heads/neuraphage/<id>, for the branch neuraphage/<id>/work,
// alone in its directory: see [Launcher.RefDir]), made at each launch when
// missing. These are found from the repository and the branch the daemon
// knows, never from what the worktree says (its .git file and HEAD are the
// task's to change). The repository's own index, config and other branches
// (main among them) stay read-only; so `git -C ../repo commit` fails. The
// shared object store, loose objects and packs alike, is read-only: it can
// be neither removed nor changed, nor linked or moved into a writable
// directory (refer is not granted there). What a task cannot do with git:
// delete or pack refs (packed-refs is rewritten in the git directory's
// root), gc or repack the shared store, stash (refs/stash is in the git
// directory's root), or change the repository's config. Other tasks'
// branches are out of reach, each in its own directory, except from a task
// whose recorded branch is of the older flat form neuraphage/<id>: its
// directory is the one all task branches are beneath; such a task (and one
// provisioned before tasks had object directories) writes loose objects in
// the shared store, as before.
//
// # Reads
//
// Landlock only grants, so "read everything except the denied paths" is
// computed at each launch as a set of grants ([ReadGrants]): walking from /
// down the ancestors of each denied path, every sibling met on the way is
// granted read (a directory with everything beneath it, a file alone), the
// ancestors themselves get only "list the directory", and the denied paths
// get nothing. So `ls ~` works, `ls ~/.ssh` shows names, and `cat ~/.ssh/id_*`
// fails. Symbolic links met on the walk are not granted: Landlock judges an
// access by the resolved path, which is granted (or not) where it really is.
// Denied paths are resolved through symbolic links; a denied path that does
// not exist is denied from wherever its existing ancestors end, so a file
// created there later is not readable either. Files created later directly in
// an ancestor (say a new file in ~) are not readable to commands launched
// before; each command computes its grants anew.
//
// # Network
//
// allow (the default) leaves the network alone. deny refuses TCP connect and
// bind; a ports list allows TCP connect and bind to those ports only. Both
// need Landlock ABI v4 (Linux 6.7); on an older kernel the policy either
// refuses to run (sandbox.require) or degrades to an unrestricted network,
// which [Status] and the task's events say. UDP and other protocols are not
// restricted: Landlock restricts UDP only from ABI v10, and this package
// restricts TCP alone on every ABI. With deny or a ports list, connecting to
// abstract UNIX sockets outside the sandbox is refused too (ABI v6).
//
// Signals to processes outside the sandbox (the daemon) are refused from ABI
// v6 on, whatever the policy.
//
// Landlock restricts root as it restricts anyone.
package sandbox

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Policy is what a sandboxed command may reach. Paths are absolute.
type Policy struct {
	// Write lists the directories (or files) the command may change.
	Write []string
	// Objects lists git object directories where the command may add (and
	// so change and remove) loose objects and nothing else: their fan-out
	// subdirectories 00..ff (made when missing) are writable, while the
	// directory itself, its packs (pack/) and info/ stay read-only. It is
	// the task's own object directory, or the shared store for a task
	// provisioned before tasks had one.
	Objects []string
	// DenyRead lists the paths the command may not read; everything else
	// is readable.
	DenyRead []string
	// Network says which TCP connections the command may make.
	Network Network
	// Degrade lets Apply run with less than the policy asks where the
	// kernel cannot enforce it (network rules before ABI v4) instead of
	// failing.
	Degrade bool
}

// Network is a network policy: allow everything (the zero value), deny
// everything, or allow TCP to the listed ports only.
type Network struct {
	Deny  bool
	Ports []uint16
}

// Allows reports whether n leaves the network unrestricted.
func (n Network) Allows() bool { return !n.Deny && len(n.Ports) == 0 }

// String renders n as ParseNetwork reads it: "allow", "deny" or "80,443".
func (n Network) String() string {
	switch {
	case n.Deny:
		return "deny"
	case len(n.Ports) > 0:
		s := make([]string, len(n.Ports))
		for i, p := range n.Ports {
			s[i] = strconv.Itoa(int(p))
		}
		return strings.Join(s, ",")
	}
	return "allow"
}

// ParseNetwork reads "allow", "deny" or a comma-separated list of TCP ports
// (1..65535).
func ParseNetwork(s string) (Network, error) {
	switch s {
	case "allow", "":
		return Network{}, nil
	case "deny":
		return Network{Deny: true}, nil
	}
	var n Network
	for f := range strings.SplitSeq(s, ",") {
		p, err := strconv.ParseUint(strings.TrimSpace(f), 10, 16)
		if err != nil || p == 0 {
			return Network{}, fmt.Errorf("want allow, deny or a list of TCP ports (1..65535), got %q", s)
		}
		if !slices.Contains(n.Ports, uint16(p)) {
			n.Ports = append(n.Ports, uint16(p))
		}
	}
	return n, nil
}

// ErrUnavailable is returned when Landlock cannot be used.
var ErrUnavailable = errors.New("the kernel lacks Landlock")

// Status is what the kernel offers, probed once at daemon start.
type Status struct {
	// ABI is the Landlock ABI version; 0 means none.
	ABI int
	// Reason says why ABI is 0.
	Reason string
	// Off is set when the sandbox is turned off in the config.
	Off bool
}

// TCP is the ABI from which Landlock restricts TCP connect and bind.
const TCP = 4

// Available reports whether commands run confined.
func (s Status) Available() bool { return !s.Off && s.ABI > 0 }

// String describes the mode for `daemon status`.
func (s Status) String() string {
	switch {
	case s.Off:
		return "off — sandbox.enabled is false; deny-list only"
	case s.ABI == 0:
		return "none — " + s.Reason + "; deny-list only"
	case s.ABI < TCP:
		return fmt.Sprintf("landlock v%d (fs; network not restricted: needs v%d)", s.ABI, TCP)
	}
	return fmt.Sprintf("landlock v%d (fs, tcp)", s.ABI)
}
