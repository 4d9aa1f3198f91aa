package event

// Git observations: what happens to tasks' worktrees, branches and merges.
// They carry the task in Event.TaskID (main.updated carries none); the
// "worktree", "git", "merge", "main" and "rebase" prefixes select them.
const (
	KindWorktreeCreated   Kind = "worktree.created"
	KindWorktreeRecreated Kind = "worktree.recreated"
	KindWorktreeRemoved   Kind = "worktree.removed"
	KindWorktreeStray     Kind = "worktree.stray"
	KindWorktreeRemade    Kind = "worktree.remade"
	KindGitStaleLock      Kind = "git.stale_lock"
	KindCommitMade        Kind = "git.commit"
	KindMergeQueued       Kind = "merge.queued"
	KindMergeStarted      Kind = "merge.started"
	KindMergeLanded       Kind = "merge.landed"
	KindMergeConflicted   Kind = "merge.conflicted"
	KindMergeGateFailed   Kind = "merge.gate_failed"
	KindMergeWaiting      Kind = "merge.waiting"
	KindMergeParked       Kind = "merge.parked"
	KindMergeCancelled    Kind = "merge.cancelled"
	KindMergeRolledBack   Kind = "merge.rolled_back"
	KindPROpened          Kind = "merge.pr_opened"
	KindMainUpdated       Kind = "main.updated"
	KindRebaseRequired    Kind = "rebase.required"
	KindRebaseCompleted   Kind = "rebase.completed"
	KindRebaseConflict    Kind = "rebase.conflict"
)

// WorktreeCreated: a task's worktree was made on its own branch.
type WorktreeCreated struct {
	Repo       string `json:"repo"`
	Path       string `json:"path"`
	Branch     string `json:"branch"`
	Base       string `json:"base"`
	BaseCommit string `json:"base_commit"`
	Port       int    `json:"port,omitempty"`
	DurationMs int64  `json:"duration_ms"`
}

// EventKind implements Payload.
func (WorktreeCreated) EventKind() Kind { return KindWorktreeCreated }

// WorktreeRecreated: a registered worktree missing from disk was made again
// from its branch (or from its archive ref when the branch was gone).
type WorktreeRecreated struct {
	Path   string `json:"path"`
	Branch string `json:"branch"`
	From   string `json:"from"` // the ref it was made from
	Reason string `json:"reason"`
}

// EventKind implements Payload.
func (WorktreeRecreated) EventKind() Kind { return KindWorktreeRecreated }

// WorktreeRemoved: a worktree was removed; its branch tip is kept under
// Archive when the branch was deleted.
type WorktreeRemoved struct {
	Path          string `json:"path"`
	Branch        string `json:"branch"`
	Archive       string `json:"archive,omitempty"`
	BranchDeleted bool   `json:"branch_deleted,omitempty"`
	Reason        string `json:"reason"`
	// Kept are the ignored files moved to KeptIn before removal.
	Kept   []string `json:"kept,omitempty"`
	KeptIn string   `json:"kept_in,omitempty"`
}

// EventKind implements Payload.
func (WorktreeRemoved) EventKind() Kind { return KindWorktreeRemoved }

// WorktreeStray: a worktree on a neuraphage branch that the registry does
// not know. It is reported, never deleted.
type WorktreeStray struct {
	Repo   string `json:"repo"`
	Path   string `json:"path"`
	Branch string `json:"branch,omitempty"`
}

// EventKind implements Payload.
func (WorktreeStray) EventKind() Kind { return KindWorktreeStray }

// WorktreeRemade: a worktree whose creation a killed daemon left half done
// (git's "initializing" lock, the task never ran in it) was removed and
// made again. Files in it that were not part of the checkout are kept in
// KeptIn first.
type WorktreeRemade struct {
	Path   string   `json:"path"`
	Branch string   `json:"branch"`
	Kept   []string `json:"kept,omitempty"`
	KeptIn string   `json:"kept_in,omitempty"`
}

// EventKind implements Payload.
func (WorktreeRemade) EventKind() Kind { return KindWorktreeRemade }

// GitStaleLock: a git lock file found at daemon start, left by a git
// killed with an earlier daemon. Removed says whether it was removed;
// Reason says why it was taken as stale, or why it was left.
type GitStaleLock struct {
	Repo    string `json:"repo"`
	Lock    string `json:"lock"`
	Removed bool   `json:"removed"`
	Reason  string `json:"reason"`
}

// EventKind implements Payload.
func (GitStaleLock) EventKind() Kind { return KindGitStaleLock }

// CommitMade: Neuraphage committed a task's uncommitted work on its branch.
type CommitMade struct {
	Branch  string `json:"branch"`
	Commit  string `json:"commit"`
	Files   int    `json:"files"`
	Message string `json:"message"`
}

// EventKind implements Payload.
func (CommitMade) EventKind() Kind { return KindCommitMade }

// MergeQueued: a task's branch joined the merge queue of Target.
type MergeQueued struct {
	Entry  int64  `json:"entry"`
	Branch string `json:"branch"`
	Target string `json:"target"`
	// Ahead is how many entries for Target were before it.
	Ahead int `json:"ahead"`
}

// EventKind implements Payload.
func (MergeQueued) EventKind() Kind { return KindMergeQueued }

// MergeStarted: the queue took the entry: Target was at TargetCommit.
type MergeStarted struct {
	Entry        int64  `json:"entry"`
	Target       string `json:"target"`
	TargetCommit string `json:"target_commit"`
	Attempt      int    `json:"attempt"`
}

// EventKind implements Payload.
func (MergeStarted) EventKind() Kind { return KindMergeStarted }

// MergeLanded: the work is on Target as Commit.
type MergeLanded struct {
	Entry      int64  `json:"entry"`
	Target     string `json:"target"`
	Commit     string `json:"commit"`
	Strategy   string `json:"strategy"`
	DurationMs int64  `json:"duration_ms"`
}

// EventKind implements Payload.
func (MergeLanded) EventKind() Kind { return KindMergeLanded }

// MergeConflicted: the branch conflicts with Target in Files. SentBack says
// the task was told and will fix it; otherwise the entry is parked.
type MergeConflicted struct {
	Entry    int64    `json:"entry"`
	Target   string   `json:"target"`
	Files    []string `json:"files"`
	SentBack bool     `json:"sent_back"`
}

// EventKind implements Payload.
func (MergeConflicted) EventKind() Kind { return KindMergeConflicted }

// MergeGateFailed: the gate command failed on the branch brought up to
// Target. Output is its tail.
type MergeGateFailed struct {
	Entry    int64  `json:"entry"`
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output"`
	SentBack bool   `json:"sent_back"`
}

// EventKind implements Payload.
func (MergeGateFailed) EventKind() Kind { return KindMergeGateFailed }

// MergeWaiting: the entry cannot land yet (the target's checkout is dirty,
// say) and will be tried again.
type MergeWaiting struct {
	Entry  int64  `json:"entry"`
	Reason string `json:"reason"`
}

// EventKind implements Payload.
func (MergeWaiting) EventKind() Kind { return KindMergeWaiting }

// MergeRolledBack: a restarted daemon found a git step the queue had begun
// in the task's worktree (Step: "rebase", "merge") left half done by the
// previous daemon's death, aborted it and found the branch back at Tip; the
// entry is taken up again from the start.
type MergeRolledBack struct {
	Entry int64  `json:"entry"`
	Step  string `json:"step"`
	Tip   string `json:"tip"`
}

// EventKind implements Payload.
func (MergeRolledBack) EventKind() Kind { return KindMergeRolledBack }

// MergeParked: the entry stopped for its user; `merge retry` takes it up
// again.
type MergeParked struct {
	Entry  int64  `json:"entry"`
	Reason string `json:"reason"`
}

// EventKind implements Payload.
func (MergeParked) EventKind() Kind { return KindMergeParked }

// MergeCancelled: the entry left the queue without landing.
type MergeCancelled struct {
	Entry  int64  `json:"entry"`
	Reason string `json:"reason"`
}

// EventKind implements Payload.
func (MergeCancelled) EventKind() Kind { return KindMergeCancelled }

// PROpened: the branch was pushed and a pull request opened instead of a
// local merge.
type PROpened struct {
	Entry  int64  `json:"entry"`
	Branch string `json:"branch"`
	Target string `json:"target"`
	URL    string `json:"url"`
}

// EventKind implements Payload.
func (PROpened) EventKind() Kind { return KindPROpened }

// MainUpdated: the main branch a repository's tasks work against moved
// from Previous to NewCommit while the daemon watched it (the first look
// after a start logs none, though behind tasks are still told). It carries
// no task. Rewritten says the new commit does not descend from the
// previous one (a force-push).
type MainUpdated struct {
	Repo      string `json:"repo"`
	Branch    string `json:"branch"` // the ref compared against: "main" or "origin/main"
	Previous  string `json:"previous_commit,omitempty"`
	NewCommit string `json:"new_commit"`
	Rewritten bool   `json:"rewritten,omitempty"`
	// Behind is how many active tasks of the repository are behind it.
	Behind int `json:"tasks_behind"`
}

// EventKind implements Payload.
func (MainUpdated) EventKind() Kind { return KindMainUpdated }

// RebaseRequired: the task's branch fell behind main and the task was told
// (at Urgency: fyi, helpful or blocking). NewCommits are the short
// summaries of main's latest new commits; Conflicts the files a rebase is
// predicted to conflict in; Overlap the files changed both on main and by
// the task.
type RebaseRequired struct {
	Main          string   `json:"main"`
	MainCommit    string   `json:"main_commit"`
	CommitsBehind int      `json:"commits_behind"`
	NewCommits    []string `json:"new_commits"`
	Urgency       string   `json:"urgency"`
	Conflicts     []string `json:"conflicts,omitempty"`
	Overlap       []string `json:"overlap,omitempty"`
	Manual        bool     `json:"manual,omitempty"` // asked for with `task rebase`
	// Unrelated marks an fyi note to a task none of whose files main
	// changed: it says main moved and asks for no rebase.
	Unrelated bool `json:"unrelated,omitempty"`
}

// EventKind implements Payload.
func (RebaseRequired) EventKind() Kind { return KindRebaseRequired }

// RebaseCompleted: Neuraphage rebased the task's branch onto main at a
// tool boundary; the task's uncommitted files were carried over.
type RebaseCompleted struct {
	Main         string `json:"main"`
	PreviousHead string `json:"previous_head"`
	NewHead      string `json:"new_head"`
	UpToDate     bool   `json:"up_to_date,omitempty"` // nothing to do: the branch already had main
	DurationMs   int64  `json:"duration_ms"`
}

// EventKind implements Payload.
func (RebaseCompleted) EventKind() Kind { return KindRebaseCompleted }

// RebaseConflict: a rebase onto main would conflict (Predicted: found
// before anything was touched) or did conflict and was undone; the
// worktree is as it was. Files are the conflicting files; Details git's
// report. Paused says the task was paused for its user (on_conflict).
type RebaseConflict struct {
	Main      string   `json:"main"`
	Files     []string `json:"files"`
	Details   string   `json:"details,omitempty"`
	Predicted bool     `json:"predicted,omitempty"`
	Paused    bool     `json:"paused,omitempty"`
}

// EventKind implements Payload.
func (RebaseConflict) EventKind() Kind { return KindRebaseConflict }

// gitPayload is newPayload for the git kinds.
func gitPayload(k Kind) any {
	switch k {
	case KindWorktreeCreated:
		return &WorktreeCreated{}
	case KindWorktreeRecreated:
		return &WorktreeRecreated{}
	case KindWorktreeRemoved:
		return &WorktreeRemoved{}
	case KindWorktreeStray:
		return &WorktreeStray{}
	case KindWorktreeRemade:
		return &WorktreeRemade{}
	case KindGitStaleLock:
		return &GitStaleLock{}
	case KindCommitMade:
		return &CommitMade{}
	case KindMergeQueued:
		return &MergeQueued{}
	case KindMergeStarted:
		return &MergeStarted{}
	case KindMergeLanded:
		return &MergeLanded{}
	case KindMergeConflicted:
		return &MergeConflicted{}
	case KindMergeGateFailed:
		return &MergeGateFailed{}
	case KindMergeWaiting:
		return &MergeWaiting{}
	case KindMergeParked:
		return &MergeParked{}
	case KindMergeCancelled:
		return &MergeCancelled{}
	case KindMergeRolledBack:
		return &MergeRolledBack{}
	case KindPROpened:
		return &PROpened{}
	case KindMainUpdated:
		return &MainUpdated{}
	case KindRebaseRequired:
		return &RebaseRequired{}
	case KindRebaseCompleted:
		return &RebaseCompleted{}
	case KindRebaseConflict:
		return &RebaseConflict{}
	case KindOverlapFound:
		return &OverlapFound{}
	case KindOverlapNotice:
		return &OverlapNotice{}
	case KindOverlapForecast:
		return &OverlapForecast{}
	case KindMergeOrdered:
		return &MergeOrdered{}
	case KindMergeYielded:
		return &MergeYielded{}
	}
	return nil
}

// derefGit turns the pointer gitPayload made back into a value.
func derefGit(p any) (Payload, bool) {
	switch v := p.(type) {
	case *WorktreeCreated:
		return *v, true
	case *WorktreeRecreated:
		return *v, true
	case *WorktreeRemoved:
		return *v, true
	case *WorktreeStray:
		return *v, true
	case *WorktreeRemade:
		return *v, true
	case *GitStaleLock:
		return *v, true
	case *CommitMade:
		return *v, true
	case *MergeQueued:
		return *v, true
	case *MergeStarted:
		return *v, true
	case *MergeLanded:
		return *v, true
	case *MergeConflicted:
		return *v, true
	case *MergeGateFailed:
		return *v, true
	case *MergeWaiting:
		return *v, true
	case *MergeParked:
		return *v, true
	case *MergeCancelled:
		return *v, true
	case *MergeRolledBack:
		return *v, true
	case *PROpened:
		return *v, true
	case *MainUpdated:
		return *v, true
	case *RebaseRequired:
		return *v, true
	case *RebaseCompleted:
		return *v, true
	case *RebaseConflict:
		return *v, true
	case *OverlapFound:
		return *v, true
	case *OverlapNotice:
		return *v, true
	case *OverlapForecast:
		return *v, true
	case *MergeOrdered:
		return *v, true
	case *MergeYielded:
		return *v, true
	}
	return nil, false
}
