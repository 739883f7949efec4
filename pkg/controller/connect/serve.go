// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package connect

import (
	"context"
	"errors"
	"fmt"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Reasons of a ServePlan: why an entry's etcd-backup names the store it names.
const (
	// ServeReasonPrimary: no copy is served (none declared, or copy.serve is primary).
	ServeReasonPrimary = "Primary"
	// ServeReasonCopy: copy.serve is copy: etcd-backup names the copy bucket.
	ServeReasonCopy = "Copy"
	// ServeReasonCopyIsSource: the copy bucket is the entry's own bucket: nothing to switch to.
	ServeReasonCopyIsSource = "CopyIsSource"
	// ServeReasonRefused: copy.serve is copy but switching would break the shoot's Etcd
	// (ServeObserved.SeedProvider), or a migration's source- entry's copy cannot be known:
	// etcd-backup keeps naming the primary and the entry fails.
	ServeReasonRefused = "CopyServeRefused"
)

// etcdWebhookReadsBucket are the seed provider types whose provider extension's seedprovider
// webhook reads the BackupBucket named by Etcd.spec.backup.store.container and refuses the Etcd
// (failurePolicy Fail) when there is none: provider-gcp v1.53.4's EnsureETCD. No BackupBucket is
// named as the copy bucket, so every later update of the shoot's Etcd would be refused.
var etcdWebhookReadsBucket = map[string]string{
	"gcp": "provider-gcp's seedprovider webhook (EnsureETCD) reads the BackupBucket named by the Etcd's backup container and refuses the Etcd when there is none",
}

// ServeObserved is what DecideServe decides over, for one entry.
type ServeObserved struct {
	// Place is the copy the entry's config declares (nil: none).
	Place *CopyPlace
	// Bucket is the entry's own bucket (spec.bucketName).
	Bucket string
	// SourceEntry is true for a migration's source- entry.
	SourceEntry bool
	// SeedProvider is the label seed.gardener.cloud/provider of the shoot's namespace: the seed's
	// infrastructure provider, whose seedprovider webhook mutates the shoot's Etcd.
	SeedProvider string
	// FlipBack is what the flip-back guard decides over (guardFlipBack).
	FlipBack FlipBackObserved
	// Failover is the entry's BackupBucket's record of an automatic failover (nil: none): the
	// copy is served as with copy.serve: copy.
	Failover *FailoverRecord
}

// servesCopy: copy.serve is copy, or a failover is recorded (Place must be set).
func (o ServeObserved) servesCopy() bool { return o.Place.Settings.ServesCopy() || o.Failover != nil }

// ServePlan is the store an entry's etcd-backup names.
type ServePlan struct {
	// FromCopy is true when etcd-backup names the copy bucket (Place) with the copy's region and
	// credentials.
	FromCopy bool
	Reason   string
	Message  string
	// Refused is set with ServeReasonRefused: the entry's reconcile fails with it (a
	// configuration problem) and its etcd-backup is not changed.
	Refused error
}

// DecideServe is the pure decision of which store an entry's etcd-backup names: the copy when
// copy.serve is copy, unless there is no copy to switch to or the seed's provider would refuse
// the shoot's Etcd with the copy bucket's name. A migration's source- entry is decided by the
// config as the live entry is: while the seed served the copy its shoot wrote the copy, and the
// primary holds nothing since the switch. Its copy is known only when the copy bucket's name
// derives from its bucket's (no copy.bucketName): an explicit copy.bucketName names this seed's
// copy, not the source bucket's, and the entry is refused rather than restored from a stale store.
func DecideServe(o ServeObserved) ServePlan {
	switch {
	case o.Place == nil || !o.servesCopy():
		if plan, guarded := guardFlipBack(o); guarded {
			return plan
		}
		return ServePlan{Reason: ServeReasonPrimary, Message: fmt.Sprintf("Backups are served from the primary bucket %q.", o.Bucket)}
	case o.Place.Bucket == o.Bucket:
		return ServePlan{Reason: ServeReasonCopyIsSource, Message: fmt.Sprintf("copy.serve is copy, but the copy bucket %q is the entry's own bucket: backups are served from it as they are.", o.Bucket)}
	case o.SourceEntry && o.Place.Settings.BucketName != "":
		err := objectstore.Invalidf("copy.serve: Forbidden: a migration's source entry of bucket %q cannot be served: copy.serve is copy, but copy.bucketName %q names this seed's copy bucket, not the copy of bucket %q, and bucket %q lacks what the shoot wrote since the switch; source-etcd-backup is not written",
			o.Bucket, o.Place.Bucket, o.Bucket, o.Bucket)
		return ServePlan{Reason: ServeReasonRefused, Message: err.Error(), Refused: err}
	}
	if why, ok := etcdWebhookReadsBucket[o.SeedProvider]; ok {
		err := objectstore.Invalidf("copy.serve: Forbidden: backups cannot be served from the copy bucket %q on a seed of provider %q: %s, and no BackupBucket is named %q, so every update of the shoot's Etcd would be refused; etcd-backup keeps naming bucket %q",
			o.Place.Bucket, o.SeedProvider, why, o.Place.Bucket, o.Bucket)
		return ServePlan{Reason: ServeReasonRefused, Message: err.Error(), Refused: err}
	}
	if !o.Place.Settings.ServesCopy() {
		return ServePlan{FromCopy: true, Reason: ServeReasonCopyByPolicy, Message: fmt.Sprintf("Backups are served from the copy bucket %q%s with the copy's credentials (%s/%s), not from bucket %q: %s.",
			o.Place.Bucket, regionNote(o.Place.Region), o.Place.Secret.Namespace, o.Place.Secret.Name, o.Bucket, o.Failover.Describe())}
	}
	return ServePlan{FromCopy: true, Reason: ServeReasonCopy, Message: fmt.Sprintf("copy.serve is copy: backups are served from the copy bucket %q%s with the copy's credentials (%s/%s), not from bucket %q.",
		o.Place.Bucket, regionNote(o.Place.Region), o.Place.Secret.Namespace, o.Place.Secret.Name, o.Bucket)}
}

func regionNote(region string) string {
	if region == "" {
		return ""
	}
	return fmt.Sprintf(" in region %q", region)
}

// ServeOf observes and decides which store be's etcd-backup names: its config's copy (decoded
// with p; an invalid entry config falls back to the seed configuration's, as Decode does) and its
// shoot namespace's seed provider label (read with reader; a namespace that is gone has none).
// While the seed configuration is awaited it returns provider.SeedConfigPendingError.
// sourceEntry says whether be is a migration's source- entry.
func ServeOf(ctx context.Context, reader client.Reader, p provider.Provider, be *extensionsv1alpha1.BackupEntry, sourceEntry bool) (ServePlan, *CopyPlace, error) {
	served, err := servedOf(ctx, reader, p, be, sourceEntry)
	return served.Plan, served.Place, err
}

// servedOf is ServeOf and where the shoot writes now (Served.WritesCopy, read once for both).
func servedOf(ctx context.Context, reader client.Reader, p provider.Provider, be *extensionsv1alpha1.BackupEntry, sourceEntry bool) (Served, error) {
	cfg, err := EntryConfig(p, be)
	if pending := (*provider.SeedConfigPendingError)(nil); errors.As(err, &pending) {
		return Served{}, err // nothing is decided with the defaults
	}
	place, err := CopyPlaceOf(p, cfg, be.Spec.BucketName)
	if err != nil {
		return Served{}, err
	}
	writesCopy := false
	if place != nil && place.Bucket != be.Spec.BucketName {
		if writesCopy, err = place.writesCopy(ctx, reader, p, be); err != nil {
			return Served{}, err
		}
	}
	o := ServeObserved{Place: place, Bucket: be.Spec.BucketName, SourceEntry: sourceEntry}
	rec, err := FailoverOf(ctx, reader, be.Spec.BucketName)
	if err != nil {
		return Served{}, err
	}
	if refusal, refused := failoverRefusal(rec, place); refused {
		return Served{Plan: refusal, Place: place, WritesCopy: writesCopy}, nil
	}
	if place != nil && !place.Settings.ServesCopy() {
		o.Failover = rec
	}
	if o.Failover == nil {
		if o.FlipBack, err = observeFlipBack(ctx, reader, be, place, sourceEntry, writesCopy); err != nil {
			return Served{}, err
		}
	}
	if place != nil && o.servesCopy() {
		shootNamespace, _ := backupentry.ExtractShootDetailsFromBackupEntryName(be.Name)
		ns := &corev1.Namespace{}
		switch err := reader.Get(ctx, client.ObjectKey{Name: shootNamespace}, ns); {
		case err == nil:
			o.SeedProvider = ns.Labels[v1beta1constants.LabelSeedProvider]
		case !apierrors.IsNotFound(err):
			return Served{}, fmt.Errorf("reading the shoot's namespace %q for its seed provider: %w", shootNamespace, err)
		}
	}
	return Served{Plan: DecideServe(o), Place: place, WritesCopy: writesCopy}, nil
}

// failoverRefusal is the plan of an entry whose BackupBucket records a failover to a copy bucket
// the configuration no longer declares (FailoverConflict): refused, so that etcd-backup stays on
// the recorded copy and neither the primary nor another copy bucket is named.
func failoverRefusal(rec *FailoverRecord, place *CopyPlace) (ServePlan, bool) {
	declaredCopy := ""
	if place != nil {
		declaredCopy = place.Bucket
	}
	conflict := FailoverConflict(rec, place != nil, declaredCopy)
	if conflict == nil {
		return ServePlan{}, false
	}
	return ServePlan{Reason: ServeReasonRefused, Message: conflict.Error(), Refused: conflict}, true
}

// SecretData is the data of the copy's credentials secret (ref-<credentialsRef>); a missing
// secret is ErrCopySecretMissing, naming the Seed's spec.resources.
func (c *CopyPlace) SecretData(ctx context.Context, reader client.Reader) (map[string][]byte, error) {
	s, err := secrets.Read(ctx, reader, c.Secret)
	if err != nil {
		return nil, c.credentialsError(err)
	}
	return s.Data, nil
}

// Served is what ServeOf decided for an entry (Plan, Place), and where its shoot writes now,
// whatever the plan: WritesCopy once its Etcd names the copy bucket and its etcd-backup holds the
// copy's credentials (the two-phase switch, DecideEtcdBackup, is done; on the way back it stays
// true until gardenlet rolls the Etcd onto the entry's bucket and etcd-backup takes its
// credentials). While Plan.FromCopy and not WritesCopy the switch is pending and the shoot still
// writes the entry's own bucket (or, between gardenlet's roll and the entry's next reconcile,
// nothing). The entry copy's pause and passes, the freshness count and the flip-back guard all
// judge where the shoot writes by WritesCopy.
type Served struct {
	Plan       ServePlan
	Place      *CopyPlace
	WritesCopy bool
}

// ServedOf is ServeOf for be and, for any declared copy that is not the entry's own bucket,
// whether the shoot writes the copy bucket now (CopyPlace.writesCopy: the Etcd's container, and
// etcd-backup's credentials compared with the copy's, no value kept).
func ServedOf(ctx context.Context, reader client.Reader, p provider.Provider, be *extensionsv1alpha1.BackupEntry) (Served, error) {
	return servedOf(ctx, reader, p, be, entryinfo.IsSourceEntry(be))
}

// ---- The flip-back guard: copy.serve primary after the copy was served ----

// ServeReasonCopyingBack means copy.serve is primary, but the shoot's etcd-backup names the copy
// bucket and no reverse pass of the entry copy has yet found the primary holding every snapshot
// the shoot wrote into the copy: etcd-backup keeps naming the copy (FromCopy).
const ServeReasonCopyingBack = "CopyingBack"

// ConditionBackupsCopied is the entry copy's condition on a BackupEntry (entrycopy publishes
// it); its reasons ReasonCopyingBack and ReasonCopiedBack are the flip-back's record.
const ConditionBackupsCopied gardencorev1beta1.ConditionType = "BackupsCopied"

// Reasons of BackupsCopied during a flip-back (copy.serve primary, etcd-backup naming the copy).
const (
	// ReasonCopyingBack: the entry copy copies the copy's snapshots back into the primary; the
	// message says how many are left or why it cannot.
	ReasonCopyingBack = "CopyingBack"
	// ReasonCopiedBack: a reverse pass found nothing missing in the primary: the entry's
	// reconcile switches etcd-backup to the primary.
	ReasonCopiedBack = "CopiedBack"
)

// FlipBackObserved is what guardFlipBack decides over.
type FlipBackObserved struct {
	// NamesCopy: the shoot's etcd-backup names the copy bucket (entryinfo.EtcdBackupBucket).
	NamesCopy bool
	// WritesCopy: the shoot writes the copy bucket (Served.WritesCopy).
	WritesCopy bool
	// CopiedBack: the entry's BackupsCopied reason is ReasonCopiedBack.
	CopiedBack bool
}

// guardFlipBack keeps a live entry on the copy after copy.serve went back to primary until the
// entry copy's reverse pass found the primary holding every snapshot the shoot wrote into the
// copy (table-tested): switching at once would serve a primary that lacks them (recreated empty,
// or behind by the failover), and a restore from it would find nothing until the next full
// snapshot. It guards only while etcd-backup names the copy and the shoot writes it: a shoot whose
// switch was still pending wrote nothing into the copy, and once released (etcd-backup naming the
// entry's bucket, the shoot writing the copy until gardenlet rolls its Etcd) the entry copy's
// catch-up passes carry what it writes there, so etcd-backup's bucketName never flaps back. It
// guards nothing when no copy is declared (no copy to serve from), for a source-
// entry (the live entry copies their shared prefix back), or when the copy bucket is the
// entry's own.
func guardFlipBack(o ServeObserved) (ServePlan, bool) {
	if o.Place == nil || o.SourceEntry || o.Place.Bucket == o.Bucket || !o.FlipBack.NamesCopy || !o.FlipBack.WritesCopy || o.FlipBack.CopiedBack {
		return ServePlan{}, false
	}
	return ServePlan{FromCopy: true, Reason: ServeReasonCopyingBack, Message: fmt.Sprintf("copy.serve is primary, but the shoot's etcd-backup keeps naming the copy bucket %q%s with the copy's credentials (%s/%s) until the snapshots the shoot wrote there are copied back into bucket %q (see BackupsCopied).",
		o.Place.Bucket, regionNote(o.Place.Region), o.Place.Secret.Namespace, o.Place.Secret.Name, o.Bucket)}, true
}

// observeFlipBack reads what guardFlipBack needs where it can guard: the bucket etcd-backup
// names, and be's BackupsCopied; writesCopy is Served.WritesCopy.
func observeFlipBack(ctx context.Context, reader client.Reader, be *extensionsv1alpha1.BackupEntry, place *CopyPlace, sourceEntry, writesCopy bool) (FlipBackObserved, error) {
	if place == nil || place.Settings.ServesCopy() || sourceEntry || place.Bucket == be.Spec.BucketName {
		return FlipBackObserved{}, nil
	}
	named, err := entryinfo.EtcdBackupBucket(ctx, reader, be)
	if err != nil {
		return FlipBackObserved{}, err
	}
	cond := v1beta1helper.GetCondition(be.Status.Conditions, ConditionBackupsCopied)
	return FlipBackObserved{NamesCopy: named == place.Bucket, WritesCopy: writesCopy, CopiedBack: cond != nil && cond.Reason == ReasonCopiedBack}, nil
}
