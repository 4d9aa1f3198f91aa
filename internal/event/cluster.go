package event

import "reflect"

// The cluster's kinds (internal/cluster, docs/cluster.md).
const (
	KindClusterAssigned Kind = "cluster.assigned"
	KindClusterLost     Kind = "cluster.worker_lost"
	KindClusterStale    Kind = "cluster.stale"
)

// ClusterAssigned: the task was placed on Worker for its run Epoch.
type ClusterAssigned struct {
	Worker string `json:"worker"`
	Epoch  uint64 `json:"epoch"`
	// Snapshot is the checkpoint's tree it resumes from ("" at the start).
	Snapshot string `json:"snapshot,omitempty"`
}

// EventKind implements Payload.
func (ClusterAssigned) EventKind() Kind { return KindClusterAssigned }

// ClusterLost: Worker missed its heartbeats; the task's run Epoch on it
// ends and the task goes back to the queue.
type ClusterLost struct {
	Worker string `json:"worker"`
	Epoch  uint64 `json:"epoch"`
}

// EventKind implements Payload.
func (ClusterLost) EventKind() Kind { return KindClusterLost }

// ClusterStale: messages of a fenced run (Epoch, on Worker) arrived and
// were dropped; Kind is the first one's ("obs", "ckpt", "done", "take").
type ClusterStale struct {
	Worker string `json:"worker,omitempty"`
	Epoch  uint64 `json:"epoch"`
	What   string `json:"what"`
}

// EventKind implements Payload.
func (ClusterStale) EventKind() Kind { return KindClusterStale }

// clusterKinds maps the kinds of this file to their payload types.
var clusterKinds = map[Kind]reflect.Type{
	KindClusterAssigned: reflect.TypeFor[ClusterAssigned](),
	KindClusterLost:     reflect.TypeFor[ClusterLost](),
	KindClusterStale:    reflect.TypeFor[ClusterStale](),
}
