// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package metrics defines the extension's Prometheus metrics, registered on controller-runtime's
// registry and so served on the manager's metrics endpoint. Labels are bounded: kinds,
// operations, providers, HTTP status codes, and the names of buckets and entries (one series per
// resource, removed with it); never object names or error texts.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Namespace prefixes every metric of this extension.
const Namespace = "gardener_backup"

// Label values of credentials on bucket probes.
const (
	CredentialsOperator  = "operator"
	CredentialsGenerated = "generated"
	// CredentialsCopy: the copy's credentials, probing the copy bucket (ProbeDuration only).
	CredentialsCopy = "copy"
)

// Label values of snapshot kinds.
const (
	SnapshotFull  = "full"
	SnapshotDelta = "delta"
)

var (
	// Reconciles counts the actuators' passes by kind (BackupBucket, BackupEntry), operation
	// (reconcile, delete, migrate, restore) and result: succeeded, in_progress (a
	// deletion that resumes) or the Gardener error code of the failure (error when it has none).
	Reconciles = newCounter("reconciles_total",
		"Passes of the BackupBucket and BackupEntry actuators by kind, operation (reconcile, delete, migrate, restore) and result (succeeded, in_progress or the Gardener error code).",
		"kind", "operation", "result")

	// OperationFailingSince is, for a BackupBucket or BackupEntry whose last actuator pass failed,
	// when its run of failed passes began (CountOperation); its operation and code are the last
	// failure's. One series per failing object, removed by a pass that succeeds or progresses and
	// when the object is gone: the per-object signal of failures that status.lastError shows
	// (Reconciles counts passes by kind only).
	OperationFailingSince = newGauge("operation_failing_since_timestamp_seconds",
		"Time (Unix seconds) since which the actuator passes of a BackupBucket or BackupEntry fail, without a pass that succeeded or progressed between; operation and code (the Gardener error code, or error) are the last failure's. Absent while the object's last pass did not fail.",
		"kind", "name", "operation", "code")

	// CloudRequests counts HTTP requests to the cloud by provider, store operation and HTTP
	// status code (network_error when no response came).
	CloudRequests = newCounter("cloud_requests_total",
		"HTTP requests to the cloud's APIs by provider, store operation and HTTP status code (network_error: no response).",
		"provider", "operation", "code")

	// CloudRequestDuration is the latency of HTTP requests to the cloud.
	CloudRequestDuration = newHistogram("cloud_request_duration_seconds",
		"Latency of HTTP requests to the cloud's APIs by provider and store operation.",
		[]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}, "provider", "operation")

	// DeletedObjects counts object versions deleted by the deletion engine.
	DeletedObjects = newCounter("deleted_objects_total",
		"Object versions deleted by the deletion engine, by kind of the resource deleted (BackupBucket, BackupEntry).",
		"kind")

	// DeferredObjects counts locked object versions of entries whose deletion was handed to the
	// store's lifecycle. A bucket's deletion, which is retried until its locks expire, reports
	// its locked objects in deletion_remaining_objects instead (counting each pass would count
	// the same objects again).
	DeferredObjects = newCounter("deferred_objects_total",
		"Object versions under retention locks of deleted BackupEntries whose deletion the store's lifecycle took over (verified), by kind.",
		"kind")

	// DeletionRemaining estimates the object versions a running deletion still has to delete:
	// those the last pass listed and did not settle. Removed when the deletion is done.
	DeletionRemaining = newGauge("deletion_remaining_objects",
		"Object versions a running deletion listed in its last pass and has not deleted yet (a lower bound while the listing is unfinished).",
		"kind", "name")

	// DeletionStarted is the deletion timestamp of a resource whose deletion is not done yet.
	DeletionStarted = newGauge("deletion_started_timestamp_seconds",
		"Deletion timestamp (Unix seconds) of a BackupBucket or BackupEntry whose objects are not all deleted yet.",
		"kind", "name")

	// BucketAvailable is 1 when the last probe of a bucket with these credentials succeeded.
	BucketAvailable = newGauge("bucket_available",
		"1 when the last probe reached the bucket with these credentials (operator or generated), 0 when it failed.",
		"bucket", "credentials")

	// ProbeDuration is how long one probe of a bucket with one set of credentials took.
	ProbeDuration = newHistogram("bucket_probe_duration_seconds",
		"Duration of one bucket probe (building the client and one listing of at most one object).",
		prometheus.DefBuckets, "credentials")

	// CopyBucketAvailable is 1 when the last probe of a BackupBucket's copy bucket (its seed
	// configuration's copy:) with the copy's credentials succeeded, 0 when it failed. bucket is the
	// BackupBucket (the label BucketAvailable has), copy_bucket the copy bucket; a copy bucket
	// probed no more (copy: changed or removed) loses its series.
	CopyBucketAvailable = newGauge("copy_bucket_available",
		"1 when the last probe reached a BackupBucket's copy bucket with the copy's credentials, 0 when it failed. bucket: the BackupBucket; copy_bucket: its copy bucket.",
		"bucket", "copy_bucket")

	// LatestSnapshot is the time of an entry's newest full or delta snapshot of one etcd.
	LatestSnapshot = newGauge("entry_latest_snapshot_timestamp_seconds",
		"Time (Unix seconds, from the snapshot's name) of a BackupEntry's newest full or delta snapshot of one etcd (etcd-main, etcd-events).",
		"entry", "etcd", "kind")

	// EntryObjects is the number of current objects under an entry's prefix at its last inventory.
	EntryObjects = newGauge("entry_objects",
		"Current objects under a BackupEntry's prefix at its last inventory.",
		"entry")

	// EntryBytes is the bytes of every version under an entry's prefix at its last inventory.
	EntryBytes = newGauge("entry_bytes",
		"Bytes stored under a BackupEntry's prefix (every version) at its last inventory.",
		"entry")

	// BackupsFresh mirrors the BackupsFresh condition: 1 True, 0 False; absent while Unknown.
	// bucket is the entry's BackupBucket (spec.bucketName), the label BucketAvailable has: one
	// bucket's outage is told apart from its entries' staleness (SetBackupsFresh).
	BackupsFresh = newGauge("entry_backups_fresh",
		"1 when a BackupEntry's newest full and delta snapshots are within their thresholds, 0 when one is older (the BackupsFresh condition); absent while Unknown. bucket: the entry's BackupBucket.",
		"entry", "bucket")

	// EntryIsolation says what an entry's etcd-backup secret reaches: 1 for the entry's
	// isolation, own_prefix (its own credential, entryCredentials) or bucket_wide (the bucket's).
	EntryIsolation = newGauge("entry_credentials_isolation",
		"1 for what a BackupEntry's etcd-backup secret reaches: own_prefix (the entry's own credential), bucket_wide (the bucket's credential) or bucket_wide_at_quota (the bucket's, published by allowBucketCredentialAtQuota because the store's quota refused the entry's own); sum by isolation to count entries.",
		"entry", "isolation")

	// EntryCredentialsHeadroom is how many more principals a bucket's entry issuer can create
	// before the store's quota refuses them; EntryCredentialsLimit is that quota. The figures are
	// the store's place's (IAM: the account's users, shared by every bucket whose operator's
	// credentials are in that account, and by everything else there), so buckets of one account
	// show the same. Absent where the store documents no limit (MinIO) or the figure cannot be
	// read (the EntryCredentialsHeadroom condition says which).
	EntryCredentialsHeadroom = newGauge("entry_credentials_headroom",
		"Principals a BackupBucket's entry issuer can still create before the store's quota (IAM: UsersQuota - Users of the account, shared by every bucket in that account); absent where the store documents no limit (MinIO) or the figure cannot be read.",
		"bucket", "issuer")
	// EntryCredentialsHeadroomUnreadable is 1 while a bucket's headroom cannot be read (the
	// EntryCredentialsHeadroom condition is Unknown/Unreadable, and EntryCredentialsHeadroom is
	// absent); absent otherwise.
	EntryCredentialsHeadroomUnreadable = newGauge("entry_credentials_headroom_unreadable",
		"1 while the headroom of a BackupBucket's entry issuer cannot be read (its EntryCredentialsHeadroom condition is Unknown/Unreadable, e.g. the operator's credentials may not read the account's quota); absent otherwise.",
		"bucket", "issuer")
	// EntryCredentialsLimit is the quota EntryCredentialsHeadroom is measured against.
	EntryCredentialsLimit = newGauge("entry_credentials_limit",
		"The store's quota of the principals a BackupBucket's entry issuer creates (IAM: UsersQuota of the account); absent where the store documents none.",
		"bucket", "issuer")

	// InventoryDuration is how long one inventory of an entry took.
	InventoryDuration = newHistogram("entry_inventory_duration_seconds",
		"Duration of one inventory of a BackupEntry's prefix (a streamed listing).",
		[]float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120})

	// InventoryPages counts the listing pages inventories read.
	InventoryPages = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "entry_inventory_pages_total",
		Help: "Listing pages read by entry inventories.",
	})
)

func newCounter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
}

func newGauge(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, labels)
}

func newHistogram(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets}, labels)
}

func init() {
	ctrlmetrics.Registry.MustRegister(
		Reconciles, OperationFailingSince, CloudRequests, CloudRequestDuration, DeletedObjects, DeferredObjects,
		DeletionRemaining, DeletionStarted, BucketAvailable, ProbeDuration,
		CopyBucketAvailable,
		LatestSnapshot, EntryObjects, EntryBytes, BackupsFresh, InventoryDuration, InventoryPages,
		EntryIsolation, EntryCredentialsHeadroom, EntryCredentialsHeadroomUnreadable, EntryCredentialsLimit,
	)
}

// ForgetEntry removes every series of one BackupEntry (it is gone).
func ForgetEntry(name string) {
	LatestSnapshot.DeletePartialMatch(prometheus.Labels{"entry": name})
	EntryObjects.DeleteLabelValues(name)
	EntryBytes.DeleteLabelValues(name)
	BackupsFresh.DeletePartialMatch(prometheus.Labels{"entry": name})
	EntryIsolation.DeletePartialMatch(prometheus.Labels{"entry": name})
}

// SetBackupsFresh mirrors an entry's BackupsFresh condition (1 True, 0 False, nil: Unknown, no
// series) with the entry's bucket; a series of another bucket (before a migration) goes.
func SetBackupsFresh(entry, bucket string, fresh *bool) {
	BackupsFresh.DeletePartialMatch(prometheus.Labels{"entry": entry})
	switch {
	case fresh == nil:
	case *fresh:
		BackupsFresh.WithLabelValues(entry, bucket).Set(1)
	default:
		BackupsFresh.WithLabelValues(entry, bucket).Set(0)
	}
}

// Isolation label values of EntryIsolation.
const (
	IsolationOwnPrefix  = "own_prefix"
	IsolationBucketWide = "bucket_wide"
	// IsolationBucketWideAtQuota is bucket_wide published by allowBucketCredentialAtQuota: the
	// store's quota refused the entry's own credential.
	IsolationBucketWideAtQuota = "bucket_wide_at_quota"
)

// SetEntryIsolation records what an entry's etcd-backup secret reaches: own_prefix or
// bucket_wide.
func SetEntryIsolation(entry string, ownPrefix bool) {
	isolation := IsolationBucketWide
	if ownPrefix {
		isolation = IsolationOwnPrefix
	}
	SetEntryIsolationTo(entry, isolation)
}

// SetEntryIsolationTo records isolation (one of the Isolation values) for entry, and removes
// its other values: one series per entry, so that sum by (isolation) counts entries.
func SetEntryIsolationTo(entry, isolation string) {
	EntryIsolation.WithLabelValues(entry, isolation).Set(1)
	for _, other := range []string{IsolationOwnPrefix, IsolationBucketWide, IsolationBucketWideAtQuota} {
		if other != isolation {
			EntryIsolation.DeleteLabelValues(entry, other)
		}
	}
}

// ForgetDeletion removes the deletion series of a BackupBucket or BackupEntry (kind) that is
// gone, however it went (its finalizer removed by hand, for example).
func ForgetDeletion(kind, name string) {
	DeletionStarted.DeleteLabelValues(kind, name)
	DeletionRemaining.DeleteLabelValues(kind, name)
}

// ForgetBucket removes every series of one BackupBucket (it is gone).
func ForgetBucket(name string) {
	BucketAvailable.DeletePartialMatch(prometheus.Labels{"bucket": name})
	CopyBucketAvailable.DeletePartialMatch(prometheus.Labels{"bucket": name})
	ForgetHeadroom(name)
}

// ForgetHeadroom removes a bucket's headroom series (entryCredentials off, the figure unread,
// or the bucket gone).
func ForgetHeadroom(bucket string) {
	EntryCredentialsHeadroom.DeletePartialMatch(prometheus.Labels{"bucket": bucket})
	EntryCredentialsLimit.DeletePartialMatch(prometheus.Labels{"bucket": bucket})
	EntryCredentialsHeadroomUnreadable.DeletePartialMatch(prometheus.Labels{"bucket": bucket})
}
