// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// The deferral record: an account key cannot read the account's management policy (that is the
// management plane's), so an entry that holds only a key (a migration's source- entry on the
// destination seed, whose BackupBucket is on the source seed) cannot verify the deferred-deletion
// rule itself. The bucket's reconcile, which can, reads the rule back and records what it read in
// the bucket container's metadata, which a key can read. The record proves one thing: that the
// bucket's reconcile read the rule back, as named here, at the recorded time. The reconcile
// removes the record whenever it cannot keep or read back the rule (and on a hand-back), and the
// record is gone with the account. Somebody who removes the rule by hand, behind the extension's
// back, must remove the record too (docs/azure.md).
//
// Container metadata names are C# identifiers; Azure keeps their case but matches them without.
const (
	recordRule     = "gardenerbackupdeferralrule"
	recordFilter   = "gardenerbackupdeferralfilter"
	recordActions  = "gardenerbackupdeferralactions"
	recordVerified = "gardenerbackupdeferralverified"
)

// recordedActions is what the record says the rule deletes: base blobs, previous versions and
// snapshots, as soon as their locks allow.
const recordedActions = "baseBlob,version,snapshot"

// recordedFilter is the rule's only filter as the record states it.
func recordedFilter() string { return DeferredDeletionTag + "==true" }

// deferralRecord is the record as read from a container's metadata.
type deferralRecord struct {
	rule, filter, actions string
	verified              time.Time
}

// covers says why the record does not vouch for the rule that deletes what markForDeferral tags,
// or "" when it does.
func (r deferralRecord) covers() string {
	switch {
	case r.rule == "":
		return "the container carries no record of a verified deferral rule"
	case r.rule != DeferredDeletionRule:
		return fmt.Sprintf("the record names rule %q, not %q", r.rule, DeferredDeletionRule)
	case r.filter != recordedFilter():
		return fmt.Sprintf("the record's filter is %q, not %q", r.filter, recordedFilter())
	case r.actions != recordedActions:
		return fmt.Sprintf("the record's actions are %q, not %q", r.actions, recordedActions)
	case r.verified.IsZero():
		return "the record carries no valid time of verification"
	}
	return ""
}

// readRecord reads the deferral record of bucket's container.
func (s *store) readRecord(ctx context.Context, bucket string) (deferralRecord, error) {
	c, err := s.container(ctx, bucket)
	if err != nil {
		return deferralRecord{}, err
	}
	props, err := c.GetProperties(ctx, nil)
	if err != nil {
		return deferralRecord{}, fmt.Errorf("reading the metadata of container %q: %w", bucket, s.classify(err))
	}
	get := func(key string) string {
		for k, v := range props.Metadata {
			if strings.EqualFold(k, key) {
				return deref(v)
			}
		}
		return ""
	}
	r := deferralRecord{rule: get(recordRule), filter: get(recordFilter), actions: get(recordActions)}
	if t, err := time.Parse(time.RFC3339, get(recordVerified)); err == nil {
		r.verified = t
	}
	return r, nil
}

// writeRecord records in bucket's container that the rule was read back as needed at verified,
// keeping the container's other metadata.
func (s *store) writeRecord(ctx context.Context, bucket string, verified time.Time) error {
	return s.updateRecord(ctx, bucket, map[string]string{
		recordRule:     DeferredDeletionRule,
		recordFilter:   recordedFilter(),
		recordActions:  recordedActions,
		recordVerified: verified.UTC().Format(time.RFC3339),
	})
}

// removeRecord removes the deferral record from bucket's container, keeping its other metadata.
func (s *store) removeRecord(ctx context.Context, bucket string) error {
	err := s.updateRecord(ctx, bucket, nil)
	if errors.Is(err, objectstore.ErrBucketNotFound) {
		return nil
	}
	return err
}

// updateRecord replaces the record's keys of bucket's container metadata with record (nil: none).
func (s *store) updateRecord(ctx context.Context, bucket string, record map[string]string) error {
	c, err := s.container(ctx, bucket)
	if err != nil {
		return err
	}
	props, err := c.GetProperties(ctx, nil)
	if err != nil {
		return fmt.Errorf("reading the metadata of container %q: %w", bucket, s.classify(err))
	}
	meta := map[string]*string{}
	had := false
	for k, v := range props.Metadata {
		if isRecordKey(k) {
			had = true
			continue
		}
		meta[k] = v
	}
	if !had && len(record) == 0 {
		return nil // nothing to remove
	}
	for k, v := range record {
		meta[k] = to.Ptr(v)
	}
	if _, err := c.SetMetadata(ctx, &container.SetMetadataOptions{Metadata: meta}); err != nil {
		return fmt.Errorf("writing the deferral record to the metadata of container %q: %w", bucket, s.classify(err))
	}
	return nil
}

func isRecordKey(k string) bool {
	for _, r := range []string{recordRule, recordFilter, recordActions, recordVerified} {
		if strings.EqualFold(k, r) {
			return true
		}
	}
	return false
}

// ensureRuleAndRecord converges the deferred-deletion rule, reads it back, and records the
// verification in the bucket's container for entries that hold only the account key. When the
// rule cannot be written, read or does not read back as needed, the record is removed (nothing may
// vouch for a rule that is not verified) and the error says why.
func (s *armStore) ensureRuleAndRecord(ctx context.Context, bucket, rg, account string, log *changeLog) error {
	if !log.apply {
		return s.ensureDeferredDeletionRule(ctx, rg, account, log)
	}
	d := s.blobs
	verr := s.verifyRule(ctx, rg, account)
	if verr != nil {
		if rerr := d.removeRecord(ctx, bucket); rerr != nil {
			return fmt.Errorf("%w; and removing the deferral record failed, so entries holding only the account key may still rely on it: %v", verr, rerr)
		}
		return verr
	}
	return d.writeRecord(ctx, bucket, time.Now())
}

// verifyRule writes the deferred-deletion rule where it is missing or differs and reads it back.
func (s *armStore) verifyRule(ctx context.Context, rg, account string) error {
	if err := s.ensureDeferredDeletionRule(ctx, rg, account, applying()); err != nil {
		return err
	}
	rules, i, err := s.readRule(ctx, rg, account)
	if err != nil {
		return err
	}
	if i < 0 {
		return fmt.Errorf("%w: lifecycle rule %q on storage account %q does not read back as written: it is missing", objectstore.ErrUnsupported, DeferredDeletionRule, account)
	}
	if why := ruleMismatch(rules[i]); why != "" {
		return fmt.Errorf("%w: lifecycle rule %q on storage account %q does not read back as written: %s", objectstore.ErrUnsupported, DeferredDeletionRule, account, why)
	}
	return nil
}
