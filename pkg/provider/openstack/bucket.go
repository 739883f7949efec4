// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// EnsureBucket implements objectstore.Management: the container exists, private (no public
// grant in its read ACL; the grants to projects and users of others, and their metadata, are
// kept), with versioning as declared, marked as this bucket's (ownershipOf: a container in
// provider-openstack's form is adopted, any other is ErrOwnedByOther and untouched). With
// handBack, the state provider-openstack handles is read back before it returns nil.
func (s *management) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	_, err := s.reconcile(ctx, b, true)
	return err
}

// PlanBucket implements objectstore.BucketPlanner: EnsureBucket's reads and diff without its
// writes (with handBack, the listing of the container's versions too).
func (s *management) PlanBucket(ctx context.Context, b objectstore.Bucket) ([]objectstore.BucketChange, error) {
	return s.reconcile(ctx, b, false)
}

// reconcile is EnsureBucket (apply) or PlanBucket: observe, desire, diff and, with apply, write.
func (s *management) reconcile(ctx context.Context, b objectstore.Bucket, apply bool) ([]objectstore.BucketChange, error) {
	if s.unusable != nil {
		// Refused before anything is made: no shoot comes to depend on backups never taken.
		return nil, s.unusable
	}
	if err := osapi.ValidateBucketName(b.Name); err != nil {
		return nil, err
	}
	cfg := s.cfg
	c, err := s.swift(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	noVersioning := s.noObjectVersioning
	s.mu.Unlock()
	if cfg.Versioning && noVersioning {
		return nil, fmt.Errorf("%w: spec.providerConfig.versioning: the Swift cluster offers no object versioning "+
			"(its /info lists no object_versioning: the versioned_writes middleware with allow_object_versioning = true), "+
			"so the container's versioning would be dropped without a word: set versioning: false or enable it in the cluster", objectstore.ErrUnsupported)
	}
	current, md, err := readContainer(ctx, c, b.Name)
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		changes := []objectstore.BucketChange{{Setting: "container", Action: objectstore.ChangeCreate, Detail: fmt.Sprintf("private, versioning %t, marked %s", cfg.Versioning, MetaBucket)}}
		if !apply {
			return changes, nil
		}
		// Made private (Swift gives a new container no ACL), with its versioning and marker.
		opts := containers.CreateOpts{VersionsEnabled: cfg.Versioning, Metadata: map[string]string{MetaBucket: b.Name}}
		if _, err := containers.Create(ctx, c, b.Name, opts).Extract(); err != nil {
			return nil, fmt.Errorf("creating container %q: %w", b.Name, classify(err))
		}
		return s.handBackMarks(ctx, c, b, opts.Metadata, changes, true)
	case err != nil:
		return nil, fmt.Errorf("reading container %q: %w", b.Name, classify(err))
	}
	if _, marked := metaValue(md, MetaBucket); cfg.HandBack && !marked {
		// A finished hand-back (or a container never ours): nothing of this extension's is on
		// the container, and nothing is written; what provider-openstack could not delete is
		// still named.
		return nil, s.handedBack(ctx, c, b.Name, false)
	}
	owner, err := ownershipOf(b.Name, md)
	if owner == foreign {
		return nil, err
	}
	// A reconcile of an unchanged container of ours (every rotation and spec change of a seed's
	// bucket) sends no write. Adoption writes the marker with the convergence: a container of
	// provider-openstack's form becomes ours without being re-created, renamed or emptied
	// (Swift's container POST keeps every object, and the metadata it does not name).
	var changes []objectstore.BucketChange
	versioning := cfg.Versioning
	opts := containers.UpdateOpts{VersionsEnabled: &versioning}
	if read, public := withoutPublicGrants(current.Read); public {
		opts.ContainerRead = &read
		changes = append(changes, objectstore.BucketChange{Setting: "read ACL", Action: objectstore.ChangeUpdate, Detail: "public grants removed, the others kept: " + strconv.Quote(read)})
	}
	if current.VersionsEnabled != cfg.Versioning {
		changes = append(changes, objectstore.BucketChange{Setting: "versioning", Action: objectstore.ChangeUpdate, Detail: fmt.Sprintf("%t -> %t", current.VersionsEnabled, cfg.Versioning)})
	}
	if owner == incumbents {
		opts.Metadata = map[string]string{MetaBucket: b.Name, MetaAdoptedFrom: AdoptedFromProviderOpenStack}
		changes = append(changes, objectstore.BucketChange{Setting: "metadata " + MetaBucket + ", " + MetaAdoptedFrom, Action: objectstore.ChangeCreate, Detail: "adopted from provider-openstack"})
	}
	if !apply {
		return s.handBackMarks(ctx, c, b, md, changes, false)
	}
	if len(changes) > 0 {
		if _, err := containers.Update(ctx, c, b.Name, opts).Extract(); err != nil {
			return nil, fmt.Errorf("converging container %q: %w", b.Name, classify(err))
		}
	}
	return s.handBackMarks(ctx, c, b, md, changes, true)
}

// handBackMarks finishes a reconcile that converged changes (with apply; without, a plan): with
// handBack, once the container is in the state provider-openstack handles (handedBack), this
// extension's marks leave with it (releasesMarks): MetaBucket and MetaAdoptedFrom, each only
// where it holds this extension's value (md, the metadata as read before the reconcile's
// writes), read back. provider-openstack v1.57.0 neither reads nor writes container metadata; a
// container without them is in its form again (ownershipOf: incumbents), to which a later
// reconcile with handBack writes nothing.
func (s *management) handBackMarks(ctx context.Context, c *gophercloud.ServiceClient, b objectstore.Bucket, md map[string]string, changes []objectstore.BucketChange, apply bool) ([]objectstore.BucketChange, error) {
	bucket := b.Name
	if err := s.handedBack(ctx, c, bucket, apply); err != nil || !releasesMarks(s.cfg, b.HandBackComplete) {
		return changes, err
	}
	marks := ourMarks(bucket, md)
	if len(marks) == 0 {
		return changes, nil
	}
	changes = append(changes, objectstore.BucketChange{Setting: "metadata " + strings.Join(marks, ", "), Action: objectstore.ChangeDelete, Detail: "handed back"})
	if !apply {
		return changes, nil
	}
	if _, err := containers.Update(ctx, c, bucket, containers.UpdateOpts{RemoveMetadata: marks}).Extract(); err != nil {
		return nil, fmt.Errorf("handBack: removing the metadata %s of container %q: %w", strings.Join(marks, ", "), bucket, classify(err))
	}
	_, after, err := readContainer(ctx, c, bucket)
	if err != nil {
		return nil, fmt.Errorf("reading container %q back: %w", bucket, classify(err))
	}
	if left := ourMarks(bucket, after); len(left) > 0 {
		return nil, fmt.Errorf("%w: handBack: container %q reads back with this extension's metadata %s after its removal; retried", objectstore.ErrThrottled, bucket, strings.Join(left, ", "))
	}
	return changes, nil
}

// releasesMarks says whether a hand-back with cfg that does not wait for the store removes this
// extension's marks: only in the BackupBucket controller's pass that completes the hand-back
// (complete, objectstore.Bucket.HandBackComplete), and never while the configuration still
// declares generatedCredentials (condition HandBack WaitingForSettings; the decoder refuses it
// beside handBack, this guards every other caller). In every other pass they stay, so that
// unsetting handBack meanwhile finds the container still this extension's.
func releasesMarks(cfg *osapi.BackupBucketConfig, complete bool) bool {
	return cfg.HandBack && complete && cfg.GeneratedCredentials == nil
}

// ourMarks are the keys of md that are this extension's marks for bucket (MetaBucket=bucket,
// MetaAdoptedFrom=AdoptedFromProviderOpenStack), in the form Swift names them.
func ourMarks(bucket string, md map[string]string) []string {
	var out []string
	if v, ok := metaValue(md, MetaBucket); ok && v == bucket {
		out = append(out, MetaBucket)
	}
	if v, ok := metaValue(md, MetaAdoptedFrom); ok && v == AdoptedFromProviderOpenStack {
		out = append(out, MetaAdoptedFrom)
	}
	return out
}

// DeleteBucket implements objectstore.Management. A container that is neither ours nor in
// provider-openstack's form is ErrOwnedByOther and stays.
func (s *management) DeleteBucket(ctx context.Context, name string) error {
	if err := osapi.ValidateBucketName(name); err != nil {
		return err
	}
	c, err := s.swift(ctx)
	if err != nil {
		return err
	}
	_, md, err := readContainer(ctx, c, name)
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("reading container %q: %w", name, classify(err))
	}
	if owner, err := ownershipOf(name, md); owner == foreign {
		return err
	}
	_, err = containers.Delete(ctx, c, name).Extract()
	switch {
	case err == nil, gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		return nil
	case gophercloud.ResponseCodeIs(err, http.StatusConflict):
		return fmt.Errorf("container %q: %w", name, objectstore.ErrBucketNotEmpty)
	}
	return classify(err)
}

// withoutPublicGrants returns a container read ACL as gophercloud splits it (an absent header
// is [""]) without its public grants (referrers, ".r:...", and ".rlistings": anybody may read or
// list without credentials), and whether it had any. The grants to projects and users somebody
// gave are kept: only access without credentials is this extension's to remove. A write ACL
// holds no public grant (Swift refuses referrers there) and is never changed.
func withoutPublicGrants(acl []string) (string, bool) {
	var kept []string
	public := false
	for _, part := range acl {
		for _, g := range strings.Split(part, ",") {
			g = strings.TrimSpace(g)
			switch {
			case g == "":
			case strings.HasPrefix(g, ".r:"), g == ".rlistings":
				public = true
			default:
				kept = append(kept, g)
			}
		}
	}
	return strings.Join(kept, ","), public
}
