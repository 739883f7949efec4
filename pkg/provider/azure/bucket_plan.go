// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// changeLog collects the changes of one reconcile of a bucket's settings, each found by the
// same read and comparison: with apply (EnsureBucket) each is made as it is found, without
// (PlanBucket) only listed. The deferral record (see deferralRecord) is bookkeeping of a
// verification, not a setting: it is written only with apply and never listed.
type changeLog struct {
	apply bool
	list  []objectstore.BucketChange
}

// applying is the log of EnsureBucket and of the callers that always write.
func applying() *changeLog { return &changeLog{apply: true} }

// add lists c and, with apply, makes it with write.
func (l *changeLog) add(c objectstore.BucketChange, write func() error) error {
	l.list = append(l.list, c)
	if !l.apply {
		return nil
	}
	return write()
}

// PlanBucket implements objectstore.BucketPlanner: EnsureBucket's reads and comparisons without its
// writes. A missing storage account is one change, which creates it with every setting as
// declared.
func (s *armStore) PlanBucket(ctx context.Context, b objectstore.Bucket) ([]objectstore.BucketChange, error) {
	log := &changeLog{}
	err := s.reconcile(ctx, b, log)
	return log.list, err
}

// PlanBucket implements objectstore.BucketPlanner for the account key alone.
func (s *keyManagement) PlanBucket(ctx context.Context, b objectstore.Bucket) ([]objectstore.BucketChange, error) {
	log := &changeLog{}
	err := s.reconcile(ctx, b, log)
	return log.list, err
}
