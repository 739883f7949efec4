package openstack

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// EnsureBucket implements objectstore.Store: the container exists, private (no read or write
// ACL), with versioning as declared.
func (s *store) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	if s.unusable != nil {
		// Refused before anything is made: no shoot comes to depend on backups never taken.
		return s.unusable
	}
	if err := osapi.ValidateBucketName(b.Name); err != nil {
		return err
	}
	cfg := s.cfg
	if cfg == nil {
		cfg = &osapi.BackupBucketConfig{}
	}
	c, err := s.swift(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	noVersioning := s.noObjectVersioning
	s.mu.Unlock()
	if cfg.Versioning && noVersioning {
		return fmt.Errorf("%w: spec.providerConfig.versioning: the Swift cluster offers no object versioning "+
			"(its /info lists no object_versioning: the versioned_writes middleware with allow_object_versioning = true), "+
			"so the container's versioning would be dropped without a word: set versioning: false or enable it in the cluster", objectstore.ErrUnsupported)
	}
	current, err := containers.Get(ctx, c, b.Name, nil).Extract()
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		if _, err := containers.Create(ctx, c, b.Name, containers.CreateOpts{VersionsEnabled: cfg.Versioning}).Extract(); err != nil {
			return fmt.Errorf("creating container %q: %w", b.Name, classify(err))
		}
		current = nil
	case err != nil:
		return fmt.Errorf("reading container %q: %w", b.Name, classify(err))
	}
	if current != nil && noACL(current.Read) && noACL(current.Write) && current.VersionsEnabled == cfg.Versioning {
		// As declared: a reconcile of an unchanged container (every rotation and spec change of
		// a seed's bucket) sends no write.
		return nil
	}
	empty := ""
	versioning := cfg.Versioning
	if _, err := containers.Update(ctx, c, b.Name, containers.UpdateOpts{ContainerRead: &empty, ContainerWrite: &empty, VersionsEnabled: &versioning}).Extract(); err != nil {
		return fmt.Errorf("converging container %q: %w", b.Name, classify(err))
	}
	return nil
}

// DeleteBucket implements objectstore.Store.
func (s *store) DeleteBucket(ctx context.Context, name string) error {
	if err := osapi.ValidateBucketName(name); err != nil {
		return err
	}
	c, err := s.swift(ctx)
	if err != nil {
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

// noACL reports whether a container ACL as gophercloud splits it (an absent header is [""])
// grants nothing.
func noACL(acl []string) bool {
	return strings.TrimSpace(strings.Join(acl, "")) == ""
}
