package api

import "time"

// JoinRequest is the body of POST /v1/cluster/join.
type JoinRequest struct {
	// Labels, when set, are the only labels the new worker has.
	Labels map[string]string `json:"labels,omitempty"`
}

// JoinInfo answers it: what `neuraphage worker --join URL --token T` needs.
type JoinInfo struct {
	URL    string            `json:"url"`
	Token  string            `json:"token"`
	Worker string            `json:"worker"`
	Labels map[string]string `json:"labels,omitempty"`
}

// ClusterWorker is one worker in GET /v1/cluster.
type ClusterWorker struct {
	Name     string            `json:"name"`
	Alive    bool              `json:"alive"`
	Draining bool              `json:"draining,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Capacity int               `json:"capacity"`
	Tasks    []string          `json:"tasks"`
	// Running is what the worker's last heartbeat says it runs.
	Running  []string  `json:"running,omitempty"`
	LastSeen time.Time `json:"last_seen"`
}

// ClusterStatus is GET /v1/cluster.
type ClusterStatus struct {
	URL     string          `json:"url"`
	Workers []ClusterWorker `json:"workers"`
	// Lag is how many messages from workers wait for the coordinator.
	Lag uint64 `json:"lag"`
}
