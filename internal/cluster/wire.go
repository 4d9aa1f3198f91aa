// Package cluster runs tasks on workers over NATS JetStream: the
// coordinator's remote engine (Engine: placement, epochs, the worker's side
// of engine.Host proxied to the executor's), the worker (Worker: takes its
// assignments, runs them with a local engine, streams observations and
// checkpoints, pushes its work), the embedded NATS server with per-worker
// tokens, and the wire types between them. The subjects and streams are in
// docs/cluster.md.
package cluster

import (
	"encoding/json"
	"strconv"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/inject"
	"github.com/neuraphage/neuraphage-go/internal/llm"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Streams, buckets and subjects (docs/cluster.md).
const (
	StreamWork    = "NP_WORK"
	StreamUp      = "NP_UP"
	StreamInject  = "NP_INJ"
	BucketWorkers = "NP_WORKERS"
	BucketAssign  = "NP_ASSIGN"

	upConsumer = "coordinator"
)

func workSubject(worker string) string  { return "np.work." + worker }
func upSubject(id task.ID) string       { return "np.up." + string(id) }
func injSubject(id task.ID) string      { return "np.inj." + string(id) }
func hostSubject(id task.ID) string     { return "np.host." + string(id) }
func workConsumer(worker string) string { return "w-" + worker }

// injConsumer is a run's consumer of its task's injection subject, named
// after the run's secret.
func injConsumer(secret string) string { return "r" + secret }

// Message headers.
const (
	hdrKind  = "Np-Kind"
	hdrEpoch = "Np-Epoch"
	hdrReply = "Np-Reply"
	hdrRun   = "Np-Run"
)

// Kinds of messages on np.up.<task> and np.inj.<task>.
const (
	kindObs  = "obs"
	kindCkpt = "ckpt"
	kindDone = "done"
	kindInj  = "inj"
	kindStop = "stop"
)

// Assignment is a task sent to a worker.
type Assignment struct {
	Task  task.Task `json:"task"`
	Epoch uint64    `json:"epoch"`
	// Worker is the worker it is for.
	Worker string `json:"worker"`
	// Secret names the run in everything its worker sends (header Np-Run,
	// hostReq.Run): only the worker the assignment reached can speak for it.
	Secret string `json:"secret"`
	// RepoURL is where the worker fetches the task's code and pushes its
	// snapshots; Branch is the task's branch, Base its commit there.
	RepoURL string `json:"repo_url"`
	// GitToken is the worker's token for RepoURL on the coordinator's git
	// server ("" when RepoURL is a path).
	GitToken string `json:"git_token,omitempty"`
	Branch   string `json:"branch"`
	Base     string `json:"base"`
	// Main is the repository's main branch, fetched too so that the agent
	// can compare with it and rebase onto it.
	Main string `json:"main,omitempty"`
	// Snapshot and SnapshotRef are the last checkpoint's tree (a commit on
	// Base) and the ref it was pushed to; empty at the first run.
	Snapshot    string `json:"snapshot,omitempty"`
	SnapshotRef string `json:"snapshot_ref,omitempty"`
	// Env is the run's extra environment from the coordinator's workspace.
	Env []string `json:"env,omitempty"`
	// Models is the coordinator's model settings; Keys the values of the
	// environment variables they name (API keys).
	Models llm.Config        `json:"models"`
	Keys   map[string]string `json:"keys,omitempty"`
}

// Heartbeat is a worker's entry in NP_WORKERS.
type Heartbeat struct {
	Worker   string            `json:"worker"`
	Labels   map[string]string `json:"labels,omitempty"`
	Capacity int               `json:"capacity"`
	Running  []task.ID         `json:"running,omitempty"`
	Draining bool              `json:"draining,omitempty"`
	// Stopped is set by a worker that leaves cleanly.
	Stopped bool `json:"stopped,omitempty"`
}

// assignRecord is a task's entry in NP_ASSIGN; its revision is the epoch.
type assignRecord struct {
	Worker string `json:"worker"`
	// Base is the commit the snapshot's run started from.
	Base        string `json:"base,omitempty"`
	Snapshot    string `json:"snapshot,omitempty"`
	SnapshotRef string `json:"snapshot_ref,omitempty"`
}

// wireStep is engine.Step with payloads that survive JSON (observations
// travel as events, which know their payload's kind).
type wireStep struct {
	Seq       uint64             `json:"seq"`
	Turn      int                `json:"turn"`
	Messages  []llm.Message      `json:"messages,omitempty"`
	Replace   bool               `json:"replace,omitempty"`
	Delivered []inject.Injection `json:"delivered,omitempty"`
	Call      *engine.Call       `json:"call,omitempty"`
	Events    []event.Event      `json:"events,omitempty"`
	Manifest  *task.Manifest     `json:"manifest,omitempty"`
	// Snapshot is the work tree's commit after the step, SnapshotRef where
	// it was pushed ("" when the tree did not change since the last one).
	Snapshot    string `json:"snapshot,omitempty"`
	SnapshotRef string `json:"snapshot_ref,omitempty"`
}

// ckptReply answers a checkpoint.
type ckptReply struct {
	Seq    uint64    `json:"seq"`
	Task   task.Task `json:"task"`
	Fenced bool      `json:"fenced,omitempty"`
	Error  string    `json:"error,omitempty"`
}

// doneMsg is a run's end.
type doneMsg struct {
	Outcome engine.Outcome `json:"outcome"`
	// Snapshot is the work tree's last commit ("" for no change since
	// the last checkpoint's).
	Snapshot    string `json:"snapshot,omitempty"`
	SnapshotRef string `json:"snapshot_ref,omitempty"`
}

// hostReq is a worker's request on np.host.<task>.
type hostReq struct {
	Op     string          `json:"op"`
	Epoch  uint64          `json:"epoch"`
	Worker string          `json:"worker"`
	Run    string          `json:"run"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// hostReply answers one.
type hostReply struct {
	Fenced bool   `json:"fenced,omitempty"`
	Error  string `json:"error,omitempty"`
	// Task: prepare; IDs: the queue as prepare read it.
	Task         *task.Task    `json:"task,omitempty"`
	IDs          []int64       `json:"ids,omitempty"`
	Conversation []llm.Message `json:"conversation,omitempty"`
	Stop         *engine.Stop  `json:"stop,omitempty"`
	Urgent       bool          `json:"urgent,omitempty"`
}

// Host operations.
const (
	opTake         = "take"
	opConversation = "conversation"
	opPrepare      = "prepare"
	opUrgent       = "urgent"
	opAllow        = "allow"
	opLearning     = "learning"
)

func epochString(e uint64) string { return strconv.FormatUint(e, 10) }

func parseEpoch(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}
