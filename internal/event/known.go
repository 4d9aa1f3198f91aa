package event

import (
	"slices"
	"strings"
)

// allKinds is every kind this build logs; TestKindsListsEveryKind keeps it
// complete.
var allKinds = []Kind{
	KindWorktreeCreated,
	KindWorktreeRecreated,
	KindWorktreeRemoved,
	KindWorktreeStray,
	KindWorktreeRemade,
	KindGitStaleLock,
	KindCommitMade,
	KindMergeQueued,
	KindMergeStarted,
	KindMergeLanded,
	KindMergeConflicted,
	KindMergeGateFailed,
	KindMergeWaiting,
	KindMergeParked,
	KindMergeCancelled,
	KindMergeRolledBack,
	KindPROpened,
	KindMainUpdated,
	KindRebaseRequired,
	KindRebaseCompleted,
	KindRebaseConflict,
	KindOverlapFound,
	KindOverlapNotice,
	KindOverlapForecast,
	KindMergeOrdered,
	KindMergeYielded,
	KindClusterAssigned,
	KindClusterLost,
	KindClusterStale,
	KindTaskCreated,
	KindTaskStatus,
	KindTaskMessage,
	KindTaskReturned,
	KindTaskDependency,
	KindDaemonStarted,
	KindDaemonStopping,
	KindDaemonRecovered,
	KindDaemonPermissions,
	KindDaemonDiskFull,
	KindTaskSandbox,
	KindSandboxCreated,
	KindEngineStarted,
	KindProgress,
	KindTimeout,
	KindPermissionDenied,
	KindPermissionError,
	KindRecoveryAttempt,
	KindTurnStarted,
	KindTurnEnded,
	KindText,
	KindTextDelta,
	KindToolCall,
	KindToolResult,
	KindUsage,
	KindFileChanged,
	KindNeedsInput,
	KindCompleted,
	KindFailed,
	KindDelivered,
	KindInterrupted,
	KindLearning,
	KindModelError,
	KindModelRetry,
	KindPersonaSelected,
	KindPersonaEscalated,
	KindEscalationRefused,
	KindHookActed,
	KindHookFailed,
	KindPhaseStarted,
	KindPhaseFinished,
	KindLearningExtracted,
	KindSyncMessageSent,
	KindSyncDelivered,
	KindSyncIgnored,
	KindKnowledgeForgot,
	KindHealthCheck,
	KindWatcherNudge,
	KindWatcherEscalate,
	KindWatcherPause,
	KindWatcherAbort,
	KindProcLeftoverStopped,
	KindNotifyFailed,
	KindWatchSession,
	KindWatchEvaluation,
	KindWatchInterjected,
	KindWatchContinued,
	KindWatchDelivered,
}

// Kinds returns every kind this build knows, sorted.
func Kinds() []Kind {
	ks := slices.Clone(allKinds)
	slices.Sort(ks)
	return ks
}

// KnownFilter reports whether f, a kind or a dotted prefix of kinds
// (task, task.status), matches at least one kind this build knows.
func KnownFilter(f string) bool {
	for _, k := range allKinds {
		s := string(k)
		if s == f || strings.HasPrefix(s, f+".") {
			return true
		}
	}
	return false
}
