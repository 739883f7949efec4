// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package drill proves that an entry's backups restore, as etcd-backup-restore would restore
// them, without writing anything to the store. It owns the whole drill, top down:
//
//   - Drill (drill.go) lists the entry's prefix once and selects each etcd's chain by the store's
//     rule (Collect, selection.go; checked by names, chain.go), then DrillChain drills each in a
//     new scratch directory it removes.
//   - FetchAndRestore (split.go) downloads and verifies the chain in the caller's process
//     (fetch.go, stream.go) and hands it, overlapping, to a StreamRestorer: RestoreStream
//     (restore.go: etcd's own restore, then the deltas through an embedded etcd) in this
//     process, or ChildRestorer (childrestorer.go), which runs RestoreStream in a child process,
//     the provider binary's hidden command ChildCommandName (child.go: the child and its
//     protocol), confined to its directory (child_linux.go, landlock_linux.go).
//   - A Result per etcd (Err: an *Error is a finding about the backup, errors.go; anything else
//     proves nothing); Status (status.go) is what a controller publishes of them.
//
// The controller (pkg/controller/restoredrill) schedules drills and records their verdicts; it
// calls Drill with Options.Restore set to a ChildRestorer's Restore. Nothing here imports a
// controller. docs/restore-drills.md describes the design.
package drill
