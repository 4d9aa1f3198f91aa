package proc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// EnvToken is the variable every tracked command starts with. Its value
// names the call; the command's descendants inherit it, also those that
// leave its process group (setsid, a double fork).
const EnvToken = "NEURAPHAGE_PROC"

// pollEvery is how often a stop looks again whether processes are gone.
const pollEvery = 10 * time.Millisecond

// procStat is what /proc/<pid>/stat tells about a process.
type procStat struct {
	PID, PPID, PGID, SID int
	// Start is the start time in clock ticks after boot (field 22): with
	// the boot it names a process for good, where a pid may be reused.
	Start uint64
	State string
	Comm  string
}

// Record is what a Tracker keeps on disk about one command while it runs.
type Record struct {
	Owner   string `json:"owner"`
	Token   string `json:"token"`
	Command string `json:"command"`
	// Boot is the boot id; start times count from it.
	Boot string `json:"boot"`
	// After is the recording daemon's start time: every process of the
	// command started later.
	After uint64 `json:"after"`
	// PGID and Start name the command's process group and its leader's
	// start time; zero in the moment between writing the record and
	// starting the command.
	PGID  int    `json:"pgid,omitempty"`
	Start uint64 `json:"start,omitempty"`
	// Cgroup is the command's own cgroup v2 directory, made before it
	// started, where a delegated subtree is writable; "" elsewhere.
	Cgroup string `json:"cgroup,omitempty"`
}

// Process is one process a Tracker stopped.
type Process struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`

	pgid  int
	start uint64
}

// Stopped is what a Tracker stopped of one recorded command.
type Stopped struct {
	Owner   string
	Command string
	// Processes were stopped; Survivors were still there at the bound (a
	// process in uninterruptible sleep) and stay recorded for the next start.
	Processes []Process
	Survivors []Process
}

// Tracker records the commands run under a context from WithOwner, so that
// their processes can be found again, also by a later daemon after this one
// died. A record is a small JSON file in its directory, written before the
// command starts and completed with the process group right after; it is
// removed once the command and everything it started are gone.
//
// A process belongs to a record when it started after the recording daemon
// in the same boot and either carries the record's EnvToken value in its
// environment or is a member of the recorded process group whose leader is
// gone or has the recorded start time. A pid reused by an unrelated process
// matches neither, so it is never signalled.
//
// Its methods are safe for concurrent use; a nil *Tracker tracks nothing.
type Tracker struct {
	dir    string
	cgroup string // the delegated cgroup v2 directory commands' cgroups go in; "" for none
	boot   string
	self   procStat
	grace  time.Duration
	bound  time.Duration

	mu   sync.Mutex
	live map[string]bool // tokens of the commands running now
}

// NewTracker keeps its records in dir, made 0700 if missing. grace is how
// long stopped processes have between SIGTERM and SIGKILL (zero:
// DefaultGrace). On systems without /proc it returns an error.
func NewTracker(dir string, grace time.Duration) (*Tracker, error) {
	if !tracking() {
		return nil, errors.New("processes cannot be tracked on this system")
	}
	self, err := readStat(os.Getpid())
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making the process records' directory: %w", err)
	}
	if grace <= 0 {
		grace = DefaultGrace
	}
	t := &Tracker{dir: dir, boot: bootID(), self: self, grace: grace, bound: grace + 10*time.Second, live: map[string]bool{}}
	if root := findCgroup(); root != "" && probeCgroup(root) == nil {
		t.cgroup = root
	}
	return t, nil
}

// Cgroups returns the cgroup v2 directory under which each command gets a
// cgroup of its own, or "" when none is writable and commands are found by
// their process group, start time and token alone.
func (t *Tracker) Cgroups() string {
	if t == nil {
		return ""
	}
	return t.cgroup
}

// Subreaper makes this process the parent of the orphans of the commands it
// starts (Linux PR_SET_CHILD_SUBREAPER), so that one that left its group
// and lost its parent is still a child of the daemon, which reaps it. Reap
// collects the ones no os/exec Wait waits for.
func (t *Tracker) Subreaper() error {
	if t == nil {
		return nil
	}
	return setSubreaper()
}

type ownerKey struct{}

type owner struct {
	t    *Tracker
	name string
}

// WithOwner returns ctx under which Run records its commands in t as
// name's (a task id). A nil t returns ctx.
func WithOwner(ctx context.Context, t *Tracker, name string) context.Context {
	if t == nil {
		return ctx
	}
	return context.WithValue(ctx, ownerKey{}, owner{t: t, name: name})
}

func ownerFrom(ctx context.Context) (owner, bool) {
	o, ok := ctx.Value(ownerKey{}).(owner)
	return o, ok && o.t != nil
}

// begin records a command about to start and returns its record, and
// its cgroup opened for the start when it has one (the caller closes it).
func (t *Tracker) begin(name, command string) (Record, *os.File, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	r := Record{Owner: name, Token: hex.EncodeToString(b[:]), Command: clip(command, 200), Boot: t.boot, After: t.self.Start}
	var cg *os.File
	if t.cgroup != "" {
		dir, f, err := makeCgroup(t.cgroup, name, r.Token)
		if err != nil {
			return Record{}, nil, err
		}
		r.Cgroup, cg = dir, f
	}
	t.mu.Lock()
	t.live[r.Token] = true
	t.mu.Unlock()
	if err := t.write(r); err != nil {
		t.abandon(r)
		if cg != nil {
			cg.Close()
		}
		return Record{}, nil, err
	}
	return r, cg, nil
}

// abandon forgets a record whose command did not start.
func (t *Tracker) abandon(r Record) {
	t.forget(r.Token)
	t.remove(r)
}

// started completes r with the group of the command just started.
func (t *Tracker) started(r Record, pid int) (Record, error) {
	st, err := readStat(pid)
	if err != nil {
		return r, fmt.Errorf("reading the start of process %d: %w", pid, err)
	}
	r.PGID, r.Start = pid, st.Start
	return r, t.write(r)
}

// end kills what is left of r's command: its group and the processes that
// carry its token, escaped or not. It reaps the ones that are this
// process's children and no os/exec Wait's (see reapable), and removes the
// record once all are gone. It reports what it killed.
func (t *Tracker) end(r Record) []Process {
	defer t.forget(r.Token)
	stopped, survivors := t.stop([]Record{r}, false)
	if len(survivors[0]) == 0 {
		t.remove(r)
	}
	return slices.DeleteFunc(stopped[0], func(p Process) bool { return p.pgid == r.PGID })
}

func (t *Tracker) forget(token string) {
	t.mu.Lock()
	delete(t.live, token)
	t.mu.Unlock()
}

// StopLeftovers stops the processes of the records that no command of this
// Tracker is running: those a dead daemon left. Each gets SIGTERM, and
// SIGKILL after the grace period. Records whose processes are all gone are
// removed. It returns what it stopped, one Stopped per record that had
// processes, and the records it could not read.
func (t *Tracker) StopLeftovers() ([]Stopped, error) {
	if t == nil {
		return nil, nil
	}
	recs, err := t.records(func(r Record) bool { return !t.isLive(r.Token) })
	return t.stopRecords(recs, true), err
}

// StopOwner stops what is left of name's commands, running or left by a
// dead daemon: for a task whose run ended, before its worktree goes. It
// returns what it stopped.
func (t *Tracker) StopOwner(name string) ([]Stopped, error) {
	if t == nil {
		return nil, nil
	}
	recs, err := t.records(func(r Record) bool { return r.Owner == name })
	return t.stopRecords(recs, true), err
}

func (t *Tracker) stopRecords(recs []Record, term bool) []Stopped {
	if len(recs) == 0 {
		return nil
	}
	stopped, survivors := t.stop(recs, term)
	var out []Stopped
	for i, r := range recs {
		if len(survivors[i]) == 0 {
			t.remove(r)
		}
		if len(stopped[i])+len(survivors[i]) > 0 {
			out = append(out, Stopped{Owner: r.Owner, Command: r.Command, Processes: stopped[i], Survivors: survivors[i]})
		}
	}
	return out
}

func (t *Tracker) isLive(token string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live[token]
}

// stop signals the processes of recs until they are gone or the bound
// passes: SIGTERM first and SIGKILL after the grace period when term is
// set, else SIGKILL at once. For each record it returns the processes
// stopped and those still there at the bound.
func (t *Tracker) stop(recs []Record, term bool) (stopped, survivors [][]Process) {
	stopped = make([][]Process, len(recs))
	survivors = make([][]Process, len(recs))
	seen := make([]map[int]Process, len(recs))
	for i := range seen {
		seen[i] = map[int]Process{}
	}
	start := time.Now()
	sig := syscall.SIGKILL
	if term {
		sig = syscall.SIGTERM
	}
	for {
		all, err := listProcesses()
		if err != nil {
			break
		}
		if sig == syscall.SIGTERM && time.Since(start) >= t.grace {
			sig = syscall.SIGKILL
		}
		left := 0
		byPID := make(map[int]procStat, len(all))
		for _, p := range all {
			byPID[p.PID] = p
		}
		for i, r := range recs {
			if r.Cgroup != "" && sig == syscall.SIGKILL {
				_ = killCgroup(r.Cgroup)
			}
			// A zombie's environment cannot be read: the processes killed
			// before are looked up by pid and start time.
			for pid, k := range seen[i] {
				if p, ok := byPID[pid]; ok && p.State == "Z" && p.Start == k.start && t.reapable(p) && !reap(pid) {
					left++
				}
			}
			for _, p := range t.members(r, all) {
				if p.State == "Z" {
					if t.reapable(p) && !reap(p.PID) {
						left++
					}
					continue
				}
				if _, ok := seen[i][p.PID]; !ok {
					seen[i][p.PID] = Process{PID: p.PID, Command: cmdline(p), pgid: p.PGID, start: p.Start}
				} else if sig == syscall.SIGTERM {
					left++ // told once; given the grace period
					continue
				}
				_ = syscall.Kill(p.PID, sig)
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Since(start) >= t.bound {
			for i, r := range recs {
				for _, p := range t.members(r, all) {
					if p.State != "Z" {
						survivors[i] = append(survivors[i], seen[i][p.PID])
						delete(seen[i], p.PID)
					}
				}
			}
			break
		}
		time.Sleep(pollEvery)
	}
	for i := range recs {
		for _, p := range seen[i] {
			stopped[i] = append(stopped[i], p)
		}
		slices.SortFunc(stopped[i], func(a, b Process) int { return a.PID - b.PID })
	}
	return stopped, survivors
}

// members are the processes of all that belong to r (see Tracker).
func (t *Tracker) members(r Record, all []procStat) []procStat {
	if r.Boot != t.boot {
		return nil // a reboot ended them all
	}
	group := r.PGID > 0
	if group {
		for _, p := range all {
			if p.PID == r.PGID && p.Start != r.Start {
				group = false // the leader's pid names another process now
			}
		}
	}
	kv := EnvToken + "=" + r.Token
	var inCgroup map[int]bool
	if r.Cgroup != "" {
		inCgroup = map[int]bool{}
		for _, pid := range cgroupPIDs(r.Cgroup) {
			inCgroup[pid] = true
		}
	}
	// Every process of the command started after the recording daemon,
	// and, once the leader is known, after the leader.
	after := max(r.After, r.Start)
	var out []procStat
	for _, p := range all {
		if p.PID == t.self.PID || p.Start < after {
			continue
		}
		if inCgroup[p.PID] || (group && p.PGID == r.PGID && p.Start >= r.Start) || hasEnv(p.PID, kv) {
			out = append(out, p)
		}
	}
	return out
}

// reapable says whether p, if it is this process's child, may be reaped
// here without taking an exit status from an os/exec Wait. Every child the
// daemon starts through os/exec (here and in the git runner) leads its own
// process group (Setpgid), and a group leader can never change its
// session; a child started without Setpgid (as tests do) stays in our
// group. So a child in another session, or in another group that it does
// not lead, became our child as an orphan (we are its subreaper), and no
// Wait waits for it.
func (t *Tracker) reapable(p procStat) bool {
	return p.PPID == t.self.PID && (p.SID != t.self.SID || (p.PGID != p.PID && p.PGID != t.self.PGID))
}

// Reap collects the exit status of the orphans that became this process's
// children and have exited (see reapable). It returns how many it reaped.
func (t *Tracker) Reap() int {
	if t == nil {
		return 0
	}
	all, err := listProcesses()
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range all {
		if p.State == "Z" && t.reapable(p) && reap(p.PID) {
			n++
		}
	}
	return n
}

// records reads the records keep selects. Files it cannot parse are
// reported in the error and left alone.
func (t *Tracker) records(keep func(Record) bool) ([]Record, error) {
	names, err := filepath.Glob(filepath.Join(t.dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var recs []Record
	var errs []error
	for _, name := range names {
		b, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue // its command ended meanwhile
		}
		var r Record
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		if err == nil && (r.Token == "" || filepath.Base(name) != r.Token+".json") {
			err = errors.New("not a process record")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		if keep(r) {
			recs = append(recs, r)
		}
	}
	return recs, errors.Join(errs...)
}

// write replaces r's file whole (a temporary file renamed over it), so a
// reader, or the next daemon after a SIGKILL, sees the old record or the
// new one. It does not fsync: the records must outlive the daemon, not the
// machine, whose reboot ends the processes they name (and changes the boot
// id, so a record from before it matches nothing).
func (t *Tracker) write(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	name := filepath.Join(t.dir, r.Token+".json")
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("recording a command's processes: %w", err)
	}
	if err := os.Rename(tmp, name); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("recording a command's processes: %w", err)
	}
	return nil
}

// remove removes r's cgroup and then its file.
func (t *Tracker) remove(r Record) {
	if r.Cgroup != "" {
		removeCgroup(r.Cgroup)
	}
	_ = os.Remove(filepath.Join(t.dir, r.Token+".json"))
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not in the middle of a rune
		cut--
	}
	return s[:cut] + "…"
}
