// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"context"
	"errors"
	"fmt"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// entryLookTimeout bounds the look at the entry before a snapshot copied past the pass's
// deadline commits (entryLive). Where the look is at the deadline (the snapshot read whole
// before it, its last parts still being uploaded), a write may land until the look ends: the
// entry's deletion's copyPassMargin covers it.
const entryLookTimeout = 10 * time.Second

// overtimeSlots is the semaphore of the passes past their deadline at once: workers-1 (at least
// one), so that with every other worker holding a snapshot in overtime one worker still copies
// the other entries; a pass given no slot is cut off at its deadline as before (its snapshot is
// streamed again by a later pass). One is made by Controller for its reconciler (the one
// copier of the controller's workers), never shared between controllers; nil caps nothing.
type overtimeSlots chan struct{}

func newOvertimeSlots(workers int) overtimeSlots { return make(overtimeSlots, max(workers-1, 1)) }

// take is replication.Options.OvertimeSlot: a slot where one is free, never waiting.
func (s overtimeSlots) take() (release func(), ok bool) {
	if s == nil {
		return func() {}, true
	}
	select {
	case s <- struct{}{}:
		return func() { <-s }, true
	default:
		return nil, false
	}
}

// ErrEntryDeleted is entryLive's refusal: the entry is being deleted or gone.
var ErrEntryDeleted = errors.New("the BackupEntry is being deleted or gone")

// passOptions are the engine's options of be's passes, either way: the pass starts snapshots for
// its deadline (Options.PassDeadline, connect.CopyPassDeadline); a snapshot streamed at that
// moment goes on while its bytes flow and commits only where entryLive allows it, then within
// the deadline of that look. So every write of a pass lands within the deadline of the pass's
// start or of a look that found the entry live: the entry's deletion, which empties its prefix
// in the copy only the deadline and copyPassMargin after its deletionTimestamp, finds every
// write of a pass done.
func (c *copier) passOptions(ctx context.Context, be *extensionsv1alpha1.BackupEntry) replication.Options {
	deadline := c.opts.deadline()
	return replication.Options{
		Now:          c.Now,
		Deadline:     deadline,
		Guard:        c.entryLive(be),
		OvertimeSlot: c.overtime.take,
		Overtime: func(o objectstore.ObjectVersion) {
			log.FromContext(ctx).Info("Copy pass's deadline passed with a snapshot still being copied: it goes on while its bytes flow, and BackupsCopied and the lag are published when it ends",
				"key", o.Key, "bytes", o.Size, "deadline", deadline)
		},
	}
}

// entryLive is the Guard of be's passes: it reads the entry from the API server (never a cache)
// and refuses (ErrEntryDeleted) an entry that is gone, being deleted, or another object of its
// name; a failed read refuses too (the snapshot is copied again by a later pass).
func (c *copier) entryLive(be *extensionsv1alpha1.BackupEntry) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, entryLookTimeout)
		defer cancel()
		now := &extensionsv1alpha1.BackupEntry{}
		err := c.Reader.Get(ctx, client.ObjectKeyFromObject(be), now)
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("BackupEntry %s is gone: %w", be.Name, ErrEntryDeleted)
		case err != nil:
			return fmt.Errorf("reading BackupEntry %s from the API server: %w", be.Name, err)
		case now.UID != be.UID:
			return fmt.Errorf("BackupEntry %s is another object now (UID %s, the pass's %s): %w", be.Name, now.UID, be.UID, ErrEntryDeleted)
		case now.DeletionTimestamp != nil:
			return fmt.Errorf("BackupEntry %s is being deleted since %s: %w", be.Name, now.DeletionTimestamp.UTC().Format(time.RFC3339), ErrEntryDeleted)
		}
		return nil
	}
}

// refusedAsDeleted tells a pass whose commit entryLive refused because the entry is being
// deleted or gone (ErrEntryDeleted, through replication.ErrCommitRefused).
func refusedAsDeleted(o outcome) bool {
	if errors.Is(o.copyFailed, ErrEntryDeleted) {
		return true
	}
	for _, f := range o.result.Failed {
		if errors.Is(f.Err, ErrEntryDeleted) {
			return true
		}
	}
	return false
}
