// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package drill proves that an entry's backups restore, as etcd-backup-restore would restore
// them, without writing anything to the store. It owns the whole drill, top down:
//
//   - Drill lists the entry's prefix once and selects each etcd's chain by the store's rule
//     (Collect; checked by their snapshots' names, ParseKey and checkChain), then DrillChain
//     drills each in a new scratch directory it removes.
//   - FetchAndRestore downloads and verifies the chain in the caller's process (fetcher,
//     startDeltas) and hands it, overlapping, to a StreamRestorer: RestoreStream (restoreChain:
//     etcd's own restore, restoreFull, then the deltas through an embedded etcd, startEmbedded)
//     in this process, or ChildRestorer, which runs RestoreStream in a child process, the
//     provider binary's hidden command ChildCommandName (RunChild and RunChildProcess: the child
//     and its protocol, childJob and childResult), confined to its directory (confineChild,
//     restrictTo).
//   - A Result per etcd (Err: an *Error is a finding about the backup, ReasonOf; anything else
//     proves nothing); Status is what a controller publishes of them.
//
// The controller (pkg/controller/restoredrill) schedules drills and records their verdicts; it
// calls Drill with Options.Restore set to a ChildRestorer's Restore. Nothing here imports a
// controller. docs/restore-drills.md describes the design.
package drill
