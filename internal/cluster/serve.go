package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuraphage/neuraphage-go/internal/engine"
	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/git"
)

// answer serves one of the worker's requests with the executor's host.
func (c *Coordinator) answer(ctx context.Context, run *remoteRun, m *nats.Msg) {
	var req hostReq
	_ = json.Unmarshal(m.Data, &req)
	var out hostReply
	switch req.Op {
	case opTake:
		// The epoch is current (onHost checked): the worker may start.
	case opConversation:
		msgs, err := run.host.Conversation(ctx)
		out.Conversation, out.Error = msgs, errString(err)
	case opPrepare:
		before, _ := git.RevParse(ctx, run.dir, "HEAD")
		t, err := run.host.Prepare(ctx)
		if err != nil {
			out.Error = err.Error()
			break
		}
		if after, _ := git.RevParse(ctx, run.dir, "HEAD"); after != before {
			// A blocking rebase moved the task's branch here: this run
			// ends at its boundary, the worker's work is merged onto the
			// moved branch, and the next run starts from there (with the
			// rebase's outcome in its inbox).
			run.moved = true
			out.Fenced = true
			break
		}
		run.last = t
		out.Task = &t
		out.IDs = c.publishWaiting(ctx, run)
		if out.IDs == nil {
			out.IDs = []int64{}
		}
	case opUrgent:
		out.Urgent = run.host.UrgentWaiting(ctx)
	case opAllow:
		out.Stop = run.host.Allow(ctx)
	case opLearning:
		var l engine.Learning
		if err := json.Unmarshal(req.Body, &l); err != nil {
			out.Error = err.Error()
			break
		}
		out.Error = errString(run.host.RecordLearning(ctx, l))
	default:
		out.Error = fmt.Sprintf("unknown request %q", req.Op)
	}
	reply(m, out)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// upMsg applies one message of the run's stream: observations go to the
// executor's host (the store and the bus), a checkpoint is committed once
// (its sequence number), the outcome ends the run.
func (c *Coordinator) upMsg(ctx context.Context, r engine.Run, run *remoteRun, m jetstream.Msg) (engine.Outcome, bool) {
	defer func() { _ = m.Ack() }()
	switch m.Headers().Get(hdrKind) {
	case kindObs:
		var evs []event.Event
		if err := json.Unmarshal(m.Data(), &evs); err != nil {
			c.log.Warn("a worker's observations do not decode", "task_id", run.id, "err", err)
			return engine.Outcome{}, false
		}
		ps := make([]event.Payload, len(evs))
		for i, e := range evs {
			ps[i] = e.Payload
		}
		run.host.Emit(ps...)
	case kindCkpt:
		c.checkpoint(ctx, run, m)
	case kindDone:
		var d doneMsg
		if err := json.Unmarshal(m.Data(), &d); err != nil {
			return engine.Outcome{Status: engine.Failed, Reason: "the worker's outcome does not decode: " + err.Error()}, true
		}
		if d.Snapshot != "" {
			run.snapshot, run.snapshotRef = d.Snapshot, d.SnapshotRef
			c.saveSnapshot(ctx, run)
		}
		if err := c.homecoming(ctx, r, run); err != nil {
			return engine.Outcome{Status: engine.Paused, Reason: err.Error(), Turn: d.Outcome.Turn}, true
		}
		if d.Outcome.Status == engine.Completed {
			c.dropSnapshots(ctx, r)
		}
		return d.Outcome, true
	}
	return engine.Outcome{}, false
}

// checkpoint commits a step of the worker's run, once, and answers it.
func (c *Coordinator) checkpoint(ctx context.Context, run *remoteRun, m jetstream.Msg) {
	var ws wireStep
	replyTo := m.Headers().Get(hdrReply)
	if err := json.Unmarshal(m.Data(), &ws); err != nil {
		c.replyTo(replyTo, ckptReply{Error: "the checkpoint does not decode: " + err.Error()})
		return
	}
	if ws.Seq <= run.applied {
		// Sent again (its answer was lost): answered, not applied again.
		c.replyTo(replyTo, ckptReply{Seq: ws.Seq, Task: run.last})
		return
	}
	step := engine.Step{Turn: ws.Turn, Messages: ws.Messages, Replace: ws.Replace, Delivered: ws.Delivered,
		Call: ws.Call, Manifest: ws.Manifest}
	for _, e := range ws.Events {
		step.Events = append(step.Events, e.Payload)
	}
	t, err := run.host.Commit(ctx, step)
	if err != nil {
		c.replyTo(replyTo, ckptReply{Seq: ws.Seq, Error: err.Error()})
		return
	}
	run.applied, run.last = ws.Seq, t
	if ws.Snapshot != "" && ws.Snapshot != run.snapshot {
		run.snapshot, run.snapshotRef = ws.Snapshot, ws.SnapshotRef
		c.saveSnapshot(ctx, run)
	}
	c.replyTo(replyTo, ckptReply{Seq: ws.Seq, Task: t})
}

// saveSnapshot records the run's last checkpointed tree in NP_ASSIGN, for
// the next epoch to resume from.
func (c *Coordinator) saveSnapshot(ctx context.Context, run *remoteRun) {
	b, _ := json.Marshal(assignRecord{Worker: run.worker, Base: run.base, Snapshot: run.snapshot, SnapshotRef: run.snapshotRef})
	if _, err := c.kvA.Put(ctx, string(run.id), b); err != nil {
		c.log.Warn("recording a remote task's snapshot", "task_id", run.id, "err", err)
	}
}

// homecoming brings the worker's last snapshot into the task's worktree,
// for the merge queue to commit and land. When the branch moved while the
// run went on (a rebase here), the work is merged onto it (git merge-tree)
// rather than put over it, so nothing of the branch is reverted; a
// conflict leaves the worktree as it is and says so.
func (c *Coordinator) homecoming(ctx context.Context, r engine.Run, run *remoteRun) error {
	if run.snapshot == "" {
		return nil
	}
	head, err := git.RevParse(ctx, r.Dir, "HEAD")
	if err != nil {
		return fmt.Errorf("reading the task's worktree: %w", err)
	}
	tree := run.snapshot
	if head == run.base {
		if err := c.takeCommits(ctx, r, run); err != nil {
			return err
		}
	} else {
		m, err := git.MergeTree(ctx, r.Dir, head, run.snapshot)
		if err != nil {
			return fmt.Errorf("merging the worker's work onto the moved branch: %w", err)
		}
		if !m.Clean {
			return fmt.Errorf("the worker's work (%s) conflicts with the task's branch, which moved during the run, in %s; resume to run it again",
				run.snapshotRef, strings.Join(m.Conflicts, ", "))
		}
		tree = m.Tree
	}
	if _, err := git.Run(ctx, r.Dir, "read-tree", "--reset", "-u", tree); err != nil {
		return fmt.Errorf("taking the worker's work into the worktree: %w", err)
	}
	return nil
}

// takeCommits moves the task's branch, unmoved during the run, to the
// commits the agent made on the worker (the last snapshot's second parent)
// when they descend from it: the branch only goes forward, and the
// worktree is then set to the snapshot's tree by the caller.
func (c *Coordinator) takeCommits(ctx context.Context, r engine.Run, run *remoteRun) error {
	agent, err := git.RevParse(ctx, r.Dir, run.snapshot+"^2")
	if err != nil || agent == run.base {
		return nil // no commits of the agent's
	}
	if ok, err := git.IsAncestor(ctx, r.Dir, run.base, agent); err != nil || !ok {
		c.log.Warn("the agent's commits on the worker do not follow the task's branch; its work is taken as a tree", "task_id", run.id, "commit", agent, "err", err)
		return nil
	}
	if _, err := git.Run(ctx, r.Dir, "update-ref", "-m", "neuraphage: the agent's commits from its worker", "HEAD", agent, run.base); err != nil {
		return fmt.Errorf("taking the agent's commits onto the task's branch: %w", err)
	}
	return nil
}

// dropSnapshots deletes the task's snapshot refs (neuraphage/<task>/e<n>,
// c<n>) once its work is in its worktree for the merge queue: no later
// run starts from them.
func (c *Coordinator) dropSnapshots(ctx context.Context, r engine.Run) {
	prefix := "refs/heads/neuraphage/" + string(r.Task.ID) + "/"
	out, err := git.Run(ctx, r.Dir, "for-each-ref", "--format=%(refname)", prefix)
	if err != nil {
		return
	}
	for _, ref := range strings.Fields(out) {
		name := strings.TrimPrefix(ref, prefix)
		if len(name) < 2 || (name[0] != 'e' && name[0] != 'c') || strings.Trim(name[1:], "0123456789") != "" {
			continue
		}
		if _, err := git.Run(ctx, r.Dir, "update-ref", "-d", ref); err != nil {
			c.log.Warn("deleting a snapshot ref", "ref", ref, "err", err)
		}
	}
	if err := c.kvA.Delete(ctx, string(r.Task.ID)); err != nil {
		c.log.Debug("forgetting a finished assignment", "task_id", r.Task.ID, "err", err)
	}
}
