// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package entryinfo is what the BackupEntry controllers (the entry actuator, its inventory, the
// restore drill) and the bucket's hand-back know of an entry alike: where its snapshots live
// (Locate), whether they are expected now (SnapshotsNotExpected), what the extension publishes in
// its status.providerStatus (ProviderStatus), and the finalizer that holds it until its objects
// are deleted (FinalizerName). It sits below those controllers so that none imports another.
package entryinfo

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	"github.com/gardener/gardener/pkg/api/operator/v1alpha1/helper"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Whose etcd writes under an entry's prefix (Location.Owner).
const (
	// OwnerShoot: a shoot's etcds write under `<entry name without "source-">/` (gardenlet's
	// etcd prefix is the entry's name: pkg/gardenlet/operation/botanist/etcd.go:120 in gardener
	// v1.150.0), a self-hosted shoot's `kube-system--<uid>` entry included.
	OwnerShoot = "shoot"
	// OwnerGarden: the virtual garden's etcd-main writes under `[<path>/]virtual-garden-etcd-main/`
	// (gardener-operator: pkg/operator/controller/garden/garden/reconciler_reconcile.go:998-1009,
	// its etcd's store prefix `<that>/etcd-main`: pkg/component/etcd/etcd/etcd.go:419).
	OwnerGarden = "garden"
)

// Location is where the snapshots of an entry live in its bucket (spec.bucketName), as the
// component that writes them put them there, and whether the entry's deletion may delete them.
// The inventory, BackupsFresh, the restore drill, the deletion, the live guard and the orphan
// guard all take the prefix from here (Locate), so that they look at one place.
type Location struct {
	// Prefix is the scope of the entry's snapshots: each etcd writes `<Prefix><etcd>/v2/...`.
	Prefix objectstore.Prefix
	// Owner is OwnerShoot or OwnerGarden.
	Owner string
	// Garden is the name of the Garden whose etcd writes under Prefix (OwnerGarden, "" when that
	// Garden is gone).
	Garden string
	// Keep is set when the entry's deletion must not delete under Prefix now, and says why (a
	// *GardenKeptError); reading there is still right.
	Keep error
}

// LocationError reports an entry whose snapshots' place cannot be told for sure: nothing is
// counted, drilled or deleted in a place that may not be the entry's. It matches
// objectstore.ErrInvalidConfig (ERR_CONFIGURATION_PROBLEM).
type LocationError struct {
	Entry string
	// Field is the field path the cause is in (of the entry, or of the Garden).
	Field, Why string
}

func (e *LocationError) Error() string {
	return fmt.Sprintf("%s: where the snapshots of BackupEntry %q are cannot be told: %s", e.Field, e.Entry, e.Why)
}

// Is makes errors.Is(err, objectstore.ErrInvalidConfig) true.
func (e *LocationError) Is(target error) bool { return target == objectstore.ErrInvalidConfig }

// GardenKeptError reports the deletion of a garden's entry while its Garden still exists and is
// not being deleted: its virtual garden's etcd still writes under the prefix, and gardener-operator
// deletes this entry only while it deletes the Garden, after that etcd
// (pkg/operator/controller/garden/garden/reconciler_delete.go:299-303), and re-creates it on the
// Garden's next reconcile. Nothing is deleted. It matches objectstore.ErrInvalidConfig.
type GardenKeptError struct {
	Entry, Garden, Bucket, Prefix string
}

func (e *GardenKeptError) Error() string {
	return fmt.Sprintf("spec.bucketName: deleting BackupEntry %q would delete the objects under %q in bucket %q, but Garden %q exists and is not being deleted: "+
		"its virtual garden's etcd still writes its backups there; nothing is deleted and the deletion is retried. gardener-operator deletes this entry only while deleting the Garden; "+
		"to end this entry without deleting the garden's backups, remove its finalizers %s and %s",
		e.Entry, e.Prefix, e.Bucket, e.Garden, FinalizerName, backupentry.FinalizerName)
}

// Is makes errors.Is(err, objectstore.ErrInvalidConfig) true.
func (e *GardenKeptError) Is(target error) bool { return target == objectstore.ErrInvalidConfig }

// gardenEntryPrefix is how gardener-operator names the garden's entry: `garden--<garden UID>`
// (pkg/operator/controller/garden/garden/components.go:1865, r.GardenNamespace + "--" + UID).
const gardenEntryPrefix = v1beta1constants.GardenNamespace + "--"

// IsGardenEntry reports whether be is a garden's entry (class garden, which only
// gardener-operator gives an entry).
func IsGardenEntry(be *extensionsv1alpha1.BackupEntry) bool {
	return be.Spec.Class != nil && *be.Spec.Class == extensionsv1alpha1.ExtensionClassGarden
}

// IsSourceEntry reports whether be is a migration's source entry (source-<name>), which shares
// its prefix with the entry restored into: the periodic controllers look at that one only.
func IsSourceEntry(be *extensionsv1alpha1.BackupEntry) bool {
	return strings.HasPrefix(be.Name, v1beta1constants.BackupSourcePrefix+"-")
}

// GardenUID returns the Garden UID a garden entry's name carries.
func GardenUID(be *extensionsv1alpha1.BackupEntry) (types.UID, error) {
	uid, ok := strings.CutPrefix(be.Name, gardenEntryPrefix)
	if !ok || uid == "" || strings.Contains(uid, "--") {
		return "", &LocationError{Entry: be.Name, Field: "metadata.name",
			Why: fmt.Sprintf("an entry of class garden is gardener-operator's, named %s<garden UID>; this name is not", gardenEntryPrefix)}
	}
	return types.UID(uid), nil
}

// gardenBackupPlace is gardener-operator's bucket and store prefix of a Garden's etcd-main
// (etcdMainBackupBucketNameAndPrefix, unexported, reconciler_reconcile.go:998-1009): the
// bucketName's part after the first "/" (its trailing "/" cut) is a path before
// `virtual-garden-etcd-main`; without a bucketName the bucket is `garden-<uid>`.
func gardenBackupPlace(garden *operatorv1alpha1.Garden) (bucket, storePrefix string) {
	storePrefix = operatorv1alpha1.VirtualGardenETCDMain
	if backup := helper.GetETCDMainBackup(garden); backup != nil && backup.BucketName != nil {
		bucket = *backup.BucketName
		if i := strings.Index(bucket, "/"); i != -1 {
			storePrefix = strings.TrimSuffix(bucket[i+1:], "/") + "/" + storePrefix
			bucket = bucket[:i]
		}
		return bucket, storePrefix
	}
	return defaultGardenBucket(garden.UID), storePrefix
}

// defaultGardenBucket is the bucket gardener-operator names for a Garden without a bucketName.
func defaultGardenBucket(uid types.UID) string { return "garden-" + string(uid) }

// Locate says where the snapshots of be live and whether its deletion may delete them. garden is
// the Garden whose UID a garden entry's name carries (nil: there is none); it is not read for
// other entries.
//
//   - A shoot's entry (any class but garden; a self-hosted shoot's `kube-system--<uid>` too):
//     `<entry name without "source-">/`, deletable.
//   - A garden's entry: gardener-operator's `[<path>/]virtual-garden-etcd-main/` in the Garden's
//     bucket, which must be the entry's spec.bucketName. Deletable only while the Garden is being
//     deleted (gardener-operator then deletes the entry after the etcd, and the BackupBucket after
//     the entry: nothing of the garden's backups is meant to stay) or once it is gone; kept
//     (Keep) while the Garden lives. With the Garden gone, only its default bucket `garden-<uid>`
//     tells the place (no path); any other bucket's path is unknown: a *LocationError.
func Locate(be *extensionsv1alpha1.BackupEntry, garden *operatorv1alpha1.Garden) (Location, error) {
	if !IsGardenEntry(be) {
		prefix, err := objectstore.EntryPrefix(be.Name)
		return Location{Prefix: prefix, Owner: OwnerShoot}, err
	}
	uid, err := GardenUID(be)
	if err != nil {
		return Location{}, err
	}
	loc := Location{Owner: OwnerGarden}
	var bucket, storePrefix string
	switch {
	case garden != nil && helper.GetETCDMainBackup(garden) != nil:
		bucket, storePrefix = gardenBackupPlace(garden)
		loc.Garden = garden.Name
		if garden.DeletionTimestamp == nil {
			loc.Keep = &GardenKeptError{Entry: be.Name, Garden: garden.Name, Bucket: bucket}
		}
	case be.Spec.BucketName == defaultGardenBucket(uid):
		// Gone (or its backup no longer configured): its default bucket has no path.
		bucket, storePrefix = be.Spec.BucketName, operatorv1alpha1.VirtualGardenETCDMain
		if garden != nil {
			loc.Garden = garden.Name
			if garden.DeletionTimestamp == nil {
				loc.Keep = &GardenKeptError{Entry: be.Name, Garden: garden.Name, Bucket: bucket}
			}
		}
	default:
		why := fmt.Sprintf("the Garden with UID %s is gone", uid)
		if garden != nil {
			why = fmt.Sprintf("Garden %q configures no backup (spec.virtualCluster.etcd.main.backup)", garden.Name)
		}
		return Location{}, &LocationError{Entry: be.Name, Field: "spec.bucketName",
			Why: fmt.Sprintf("%s, and bucket %q is not its default %q: the path its etcd wrote under (the bucketName's part after \"/\") is known only from the Garden", why, be.Spec.BucketName, defaultGardenBucket(uid))}
	}
	if bucket != be.Spec.BucketName {
		return Location{}, &LocationError{Entry: be.Name, Field: "spec.bucketName",
			Why: fmt.Sprintf("Garden %q's etcd writes into bucket %q, the entry names %q", garden.Name, bucket, be.Spec.BucketName)}
	}
	if loc.Prefix, err = objectstore.NestedPrefix(storePrefix); err != nil {
		return Location{}, &LocationError{Entry: be.Name, Field: "spec.virtualCluster.etcd.main.backup.bucketName",
			Why: fmt.Sprintf("Garden %q's store prefix %q is not one this extension reads or deletes under: %v", garden.Name, storePrefix, err)}
	}
	if kept, ok := loc.Keep.(*GardenKeptError); ok {
		kept.Prefix = loc.Prefix.String()
	}
	return loc, nil
}

// LocateEntry is Locate with the entry's Garden read from reader (for a garden's entry only: a
// list of the cluster's Gardens, of which a runtime cluster holds one; a cluster without the
// Garden API holds none).
func LocateEntry(ctx context.Context, reader client.Reader, be *extensionsv1alpha1.BackupEntry) (Location, error) {
	if !IsGardenEntry(be) {
		return Locate(be, nil)
	}
	uid, err := GardenUID(be)
	if err != nil {
		return Location{}, err
	}
	garden, err := gardenOf(ctx, reader, uid)
	if err != nil {
		return Location{}, err
	}
	return Locate(be, garden)
}

// gardenOf returns the Garden with uid, nil when there is none.
func gardenOf(ctx context.Context, reader client.Reader, uid types.UID) (*operatorv1alpha1.Garden, error) {
	gardens := &operatorv1alpha1.GardenList{}
	if err := reader.List(ctx, gardens); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil // no Garden API here: no Garden
		}
		return nil, fmt.Errorf("listing Gardens for the one with UID %s: %w", uid, err)
	}
	for i := range gardens.Items {
		if gardens.Items[i].UID == uid {
			return &gardens.Items[i], nil
		}
	}
	return nil, nil
}
