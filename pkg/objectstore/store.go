// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package objectstore is the provider-neutral seam between the backup controllers and a cloud's
// object storage. A provider implements DataPlane and Management once; the controllers, the
// deletion engine and the conformance suite are written against them and never see a cloud SDK.
package objectstore

import (
	"context"
	"io"
	"time"
)

// Bucket is the declared state of one backup bucket. Its settings (encryption, immutability, ...)
// are the providerConfig the management plane was built with (provider.Cloud.NewManagement).
type Bucket struct {
	// Name of the bucket (or container) in the cloud.
	Name string
	// Region the bucket must live in. Stores without regions ignore it.
	Region string
	// HandBackComplete is set by the BackupBucket controller only in the pass of a hand-back
	// (providerConfig handBack) that has nothing else to wait for (decideHandBack's
	// releaseMarksStep, after the entries are released). With handBack, a provider removes the
	// marks that make the bucket this extension's (labels, metadata) only in a call with it set,
	// and keeps them in every other: until then the operator may unset handBack and find the
	// bucket still this extension's.
	HandBackComplete bool
}

// ObjectVersion names one stored object version. Stores without versions leave Version empty.
// A versioned store's delete markers are versions too: a prefix is empty only when they are gone.
// A listing fills in what the store's listing tells without one more request per object.
type ObjectVersion struct {
	Key     string
	Version string
	// Size in bytes of this version (0 for a delete marker).
	Size int64
	// Modified is when this version was written.
	Modified time.Time
	// Noncurrent is true for what a plain read of Key does not return: a noncurrent version, a
	// delete marker, a snapshot. A store without versions never sets it.
	Noncurrent bool
	// RetainUntil is when a retention lock on this version expires, where the listing (or the
	// bucket's default retention, applied to Modified) tells; zero when it does not or there is
	// none. A legal hold is not reported here.
	RetainUntil time.Time
	// DeleteMarker is true for a versioned store's delete marker (Noncurrent too).
	DeleteMarker bool
	// BlobSnapshot is true for an Azure blob snapshot: a read-only copy of a blob, not one of
	// its versions (Noncurrent too). No snapstore lists it.
	BlobSnapshot bool
	// ContentMD5 is the hex MD5 of this version's content where the store's listing states it
	// for certain; empty where it does not (S3's ETag is no MD5 for a multipart or an encrypted
	// upload, so the aws listing leaves it empty).
	ContentMD5 string
	// ETag is the store's entity tag of this version as its listing states it (S3: quoted, as
	// listed, no MD5 for multipart or encrypted uploads; Azure's blobs; Swift's hash), empty where
	// the listing states none. A conditional write (Precondition.Replaces) and a server-side copy
	// (ServerSideCopier) condition on it, so that an object written again after its listing, even
	// within the same second, is neither overwritten nor copied.
	ETag string
	// ExcludeMark is true when this version carries etcd-backup-restore's exclude mark
	// (ExcludeMarkKey "true") and the store's listing tells it (GCS metadata, Azure blob index
	// tags); a store whose listing does not tell reads it with SnapshotRule.MarkOf.
	ExcludeMark bool
}

// ObjectError is the outcome of one object of a batch deletion that failed.
type ObjectError struct {
	Object ObjectVersion
	// Err is classified with this package's sentinels; an object held by a retention lock is
	// reported as a *LockedError.
	Err error
}

// The controllers reach a cloud's object storage through two interfaces, one per plane, so that
// each caller holds no more than it needs:
//
//   - DataPlane reads and deletes objects (the deletion engine, the inventory, the probe, the
//     BackupEntry's deletion, restore drills). It needs no providerConfig: a BackupEntry's
//     credentials and a bucket name are enough.
//   - Management converges and deletes buckets and defers locked objects' deletion (the
//     BackupBucket actuator, a BackupEntry's deferral). It is built with the bucket's decoded
//     providerConfig, which EnsureBucket converges to.
//
// Writer (writing objects) is not part of either: the controllers never write objects; the
// conformance suite, the demo and the benchmarks get one from a provider's test harness.
//
// Both planes are built per request and not shared between goroutines of different requests, but
// their methods must be safe for concurrent use (the deletion engine calls DeleteObjects from
// several goroutines). Every method is idempotent: creating what exists and deleting what is gone
// are successes. Errors are classified by wrapping this package's sentinel errors
// (ErrUnauthenticated, ErrThrottled, ...) with %w, so callers use errors.Is and never read
// message text.

// DataPlane reads, lists and deletes the objects of existing buckets with one set of credentials.
type DataPlane interface {
	// ListObjects calls fn with successive pages of every object version whose key starts with
	// prefix (byte-wise; "a/" never matches "ab/x"), including delete markers, until the listing
	// ends or fn returns an error, which ListObjects then returns. Pages are at most a few
	// thousand entries: the listing is streamed, never held whole in memory. A missing bucket
	// returns ErrBucketNotFound. An empty prefix lists the whole bucket: callers that must not do
	// that go through Prefix (EntryPrefix, NestedPrefix, WholeBucket).
	ListObjects(ctx context.Context, bucket, prefix string, fn func(page []ObjectVersion) error) error

	// DeleteObjects deletes at most MaxDeleteBatch() object versions in as few requests as the
	// store allows. Objects already gone count as deleted. It returns one ObjectError for every
	// object that was not deleted (each checked, none ignored) and a non-nil error only when the
	// request as a whole failed, in which case the caller must assume nothing was deleted.
	DeleteObjects(ctx context.Context, bucket string, objects []ObjectVersion) ([]ObjectError, error)

	// MaxDeleteBatch is the largest number of objects one DeleteObjects call accepts.
	MaxDeleteBatch() int

	// Probe reads the bucket once, as cheaply as the store allows (a listing of at most one
	// object), with a permission every credential the controllers hand out has. It never writes.
	// A missing bucket returns ErrBucketNotFound; refused credentials ErrUnauthenticated or
	// ErrForbidden.
	Probe(ctx context.Context, bucket string) error

	// OpenObject opens one object for reading: version "" is its current version, any other
	// a version as ListObjects reported it (ObjectVersion.Version). The caller reads it as a
	// stream (a snapshot may be larger than memory) and must close it. A missing object (or one
	// whose current version is a delete marker, or a version that is gone) returns ErrNotFound,
	// a missing bucket ErrBucketNotFound or ErrNotFound; errors while reading the stream are
	// classified as the other methods' are.
	OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error)

	// SnapshotRule is how etcd-backup-restore's snapstore of this store lists the snapshots of
	// bucket and which version of each it reads (see SnapshotRule). It may ask the store (S3:
	// whether the bucket's versioning is Enabled, as etcd-backup-restore does before it lists).
	SnapshotRule(ctx context.Context, bucket string) (SnapshotRule, error)
}

// Management creates, converges and deletes buckets, and hands locked objects' deletion to the
// store. It is built with the bucket's decoded providerConfig (see provider.Cloud).
type Management interface {
	// EnsureBucket creates the bucket if it does not exist and converges every setting it manages
	// (encryption, access hardening, lifecycle, immutability) to the declared state, correcting
	// drift. A bucket of that name owned by somebody else returns ErrOwnedByOther and is left
	// untouched; a bucket of ours in another region returns ErrInvalidConfig.
	EnsureBucket(ctx context.Context, bucket Bucket) error

	// DeleteBucket deletes an empty bucket. A bucket that is already gone is success; a bucket
	// that still holds objects returns ErrBucketNotEmpty.
	DeleteBucket(ctx context.Context, name string) error

	// DeferDeletion asks the store itself to delete every object version now under prefix
	// (current and noncurrent versions, snapshots) once the retention locks that hold it expire,
	// for example through a lifecycle rule, so that nobody has to poll. It returns only after it
	// has read back that the mechanism is in place and matches (a rule present, enabled and scoped
	// to what this extension marked, never wider): the caller reports the deferral as done on that
	// word. Idempotent.
	//
	// A deferral touches only what it marked: a version written under prefix afterwards (the
	// prefix in use again, a shoot migrated away and back) is outside its scope, and nothing of the
	// deferral outlives what it marked. Concurrent deferrals of other prefixes of the same bucket,
	// and the bucket's EnsureBucket, never undo one that returned nil (a store serialises its
	// configuration writes, guards them with a precondition, or has no per-prefix configuration).
	// It needs no more than the entry's own credentials where the store allows it; where those
	// cannot complete or verify it, it returns an error saying what is missing (ErrForbidden: a
	// right the credentials lack; ErrUnsupported: never possible with them). Stores that cannot
	// defer at all return ErrUnsupported.
	DeferDeletion(ctx context.Context, bucket, prefix string) (Deferral, error)
}

// Writer writes objects. No controller does: it is what the conformance suite, the demo and the
// benchmarks need of a provider's test harness besides the two planes.
type Writer interface {
	// PutObject writes one object, replacing its current version (a new version where the bucket
	// keeps versions). A missing bucket returns ErrBucketNotFound or ErrNotFound.
	PutObject(ctx context.Context, bucket, key string, data []byte) error
}

// StreamWriter writes objects from a stream: what a copy between two stores needs of the
// destination, since a snapshot may be larger than memory. Every provider's store has it (each
// in its store_stream.go), and memstore.
type StreamWriter interface {
	// PutObjectStream writes exactly size bytes read from r as key, replacing its current version
	// (a new version where the bucket keeps versions). It holds no more than a bounded buffer of
	// r in memory, whatever the size (memstore, which keeps its objects in memory, aside). A reader that ends before size bytes, or holds more, fails
	// the write and leaves no object behind. A missing bucket returns ErrBucketNotFound or
	// ErrNotFound. It commits the object only after r answered io.EOF past size bytes: an error
	// of that read, as of any, fails the write and leaves nothing (a copy refuses a commit so).
	PutObjectStream(ctx context.Context, bucket, key string, r io.Reader, size int64) error
}

// ServerSideCopier copies objects inside one store: the bytes never pass through the caller.
// Every provider's data plane has it (each in its store_copy.go): aws within one endpoint, azure
// within one cloud (across its accounts), gcp within one project's reach, openstack within one
// Swift account (through the process above its max_file_size), local within one root.
type ServerSideCopier interface {
	// CopyObject copies the version src of src.Key in srcBucket (src.Version where the store keeps
	// versions, else its current version), as a listing reported it
	// (its Size and Modified), to dstKey in dstBucket of the same store (endpoint and account or
	// partition), replacing dstKey's current version. The credentials must read the source and
	// write the destination. A source that is gone returns ErrNotFound; a source written again
	// after src.Modified fails rather than copy something else.
	CopyObject(ctx context.Context, srcBucket string, src ObjectVersion, dstBucket, dstKey string) error
}

// ReadObject reads the whole current version of one object through OpenObject: for small
// objects (tests, markers), never for snapshots.
func ReadObject(ctx context.Context, d DataPlane, bucket, key string) ([]byte, error) {
	r, err := d.OpenObject(ctx, bucket, key, "")
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return data, err
}

// Deferral describes how a store deletes deferred objects by itself.
type Deferral struct {
	// Rule names the mechanism as the operator finds it in the store's console, for example
	// "lifecycle rule gardener-backup-deferred-deletion".
	Rule string
	// VerifiedBy says who read the rule back and when, where that was not this call (for
	// example "the BackupBucket's reconcile at 2026-11-25T14:00:00Z", recorded in the store
	// where the caller's credentials can read it). Empty: this call read the rule back itself.
	VerifiedBy string
}

// Verification says how the deferral's rule was verified, for an event or a log.
func (d Deferral) Verification() string {
	if d.VerifiedBy == "" {
		return "verified in place"
	}
	return "verified by " + d.VerifiedBy + ", not by this deletion"
}

// LockedError reports an object version that a retention lock or legal hold keeps from being
// deleted. It matches ErrObjectLocked with errors.Is.
type LockedError struct {
	// RetainUntil is when the lock expires; zero for a legal hold or an unknown date.
	RetainUntil time.Time
	// Cause is the store's own error, kept for the log.
	Cause error
}

func (e *LockedError) Error() string {
	if e.RetainUntil.IsZero() {
		return "object is held by a retention lock or legal hold"
	}
	return "object is held by a retention lock until " + e.RetainUntil.UTC().Format(time.RFC3339)
}

// Is makes errors.Is(err, ErrObjectLocked) true for every *LockedError.
func (e *LockedError) Is(target error) bool { return target == ErrObjectLocked }

// Unwrap returns the store's own error.
func (e *LockedError) Unwrap() error { return e.Cause }

// BucketPlanner is implemented by a Management that can tell, without writing, what its
// EnsureBucket would change: the read-only half of a rehearsal of a takeover.
type BucketPlanner interface {
	// PlanBucket reads the bucket and returns exactly the changes EnsureBucket with the same
	// providerConfig would make to it now (policy statements, lifecycle rules, versioning,
	// encryption, access settings, tags, labels), in the order EnsureBucket makes them; none when
	// the bucket is as declared. It never writes. A missing bucket is one change (Setting
	// "bucket", Action ChangeCreate), which creates it with every setting as declared. Where
	// EnsureBucket would refuse the bucket (ErrOwnedByOther, ErrInvalidConfig) PlanBucket returns
	// the same error. What EnsureBucket writes is computed by the same code, so that the plan
	// and the act cannot drift apart.
	PlanBucket(ctx context.Context, bucket Bucket) ([]BucketChange, error)
}

// ChangeAction is what a BucketChange does to its setting.
type ChangeAction string

const (
	// ChangeCreate adds a setting (or the bucket) that is not there.
	ChangeCreate ChangeAction = "create"
	// ChangeUpdate changes a setting that is there.
	ChangeUpdate ChangeAction = "update"
	// ChangeDelete removes a setting of this extension's that is no longer declared.
	ChangeDelete ChangeAction = "delete"
	// ChangeKeep writes nothing: the setting is there, stricter than the declaration (a longer
	// retention someone set), and is kept as it is; Detail says what is kept and what was declared.
	ChangeKeep ChangeAction = "keep"
)

// BucketChange is one change EnsureBucket makes to a bucket's settings. It never holds a secret.
type BucketChange struct {
	// Setting names the setting as the store's console shows it, with this extension's ID where
	// it has one: "bucket policy statement DenyInsecureTransport", "lifecycle rule
	// gardener-backup-deferred-deletion", "versioning", "label gardener-backup".
	Setting string
	Action  ChangeAction
	// Detail says briefly what is there and what will be (empty where Setting says it all).
	Detail string
}

func (c BucketChange) String() string {
	s := string(c.Action) + " " + c.Setting
	if c.Detail != "" {
		s += ": " + c.Detail
	}
	return s
}

// StreamBuffer is a StreamWriter that states its memory: what a copy's byte budget
// (replication.Options.MaxBufferBytes) reserves for each object it streams.
type StreamBuffer interface {
	// StreamBufferBytes is the most memory PutObjectStream holds at once to write an object of
	// size bytes (aws: the object up to one part, else its parts in flight).
	StreamBufferBytes(size int64) int64
}
