// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// keystoneIssuer issues bucket-scoped credentials that are Keystone application credentials of
// the operator's user, one live per bucket (two during a rotation's grace period). Each expires,
// carries access rules that allow only what etcd-backup-restore and the entry controller do in
// the bucket's container, and cannot create further credentials.
type keystoneIssuer struct {
	// store is the operator's session, whose user owns the credentials.
	store *store
	cfg   *osapi.BackupBucketConfig
}

var _ objectstore.CredentialIssuer = (*keystoneIssuer)(nil)

// appCredPrefix starts the name of every application credential this extension issues.
const appCredPrefix = "gardener-backup-"

// AppCredName names a credential of bucket issued at t.
func AppCredName(bucket string, t time.Time) string {
	return fmt.Sprintf("%s%s-%d", appCredPrefix, bucket, t.UnixNano())
}

// ofBucket says whether an application credential name is one of bucket's: the prefix, the
// bucket and nothing but a timestamp, so that bucket "a" never claims a credential of "a-1".
func ofBucket(name, bucket string) bool {
	rest, ok := strings.CutPrefix(name, appCredPrefix+bucket+"-")
	if !ok || rest == "" {
		return false
	}
	return strings.Trim(rest, "0123456789") == ""
}

// ContainerAccessRules allow the requests etcd-backup-restore and the entry controller make in
// container under the object-store endpoint path (for example "/v1/AUTH_<project>"): listing and
// reading the container, and reading, writing and deleting its objects. Bulk deletes are checked
// object by object by Swift, so they pass for this container only.
func ContainerAccessRules(endpointPath, container string) []applicationcredentials.AccessRule {
	base := strings.TrimSuffix(endpointPath, "/") + "/" + container
	var rules []applicationcredentials.AccessRule
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		rules = append(rules, applicationcredentials.AccessRule{Service: "object-store", Method: m, Path: base})
	}
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete} {
		rules = append(rules, applicationcredentials.AccessRule{Service: "object-store", Method: m, Path: base + "/**"})
	}
	return rules
}

// identity is the Keystone v3 client of the operator's session (at the secret's authURL, which
// is also what the issued credentials authenticate against) and the session's user.
func (s *keystoneIssuer) identity(ctx context.Context) (*gophercloud.ServiceClient, string, error) {
	if _, err := s.store.swift(ctx); err != nil {
		return nil, "", err
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	return &gophercloud.ServiceClient{ProviderClient: s.store.session, Endpoint: gophercloud.NormalizeURL(s.store.session.IdentityEndpoint)}, s.store.userID, nil
}

// IssueCredential implements objectstore.CredentialIssuer. Credentials of the bucket not in use
// are deleted first (one issued by a pass that failed before publishing it among them); a new
// restricted credential is tried against the container before it is handed out.
func (s *keystoneIssuer) IssueCredential(ctx context.Context, bucket string, inUse []string) (objectstore.Credential, error) {
	if err := osapi.ValidateBucketName(bucket); err != nil {
		return objectstore.Credential{}, err
	}
	if err := s.RevokeCredentials(ctx, bucket, inUse); err != nil {
		return objectstore.Credential{}, err
	}
	idc, user, err := s.identity(ctx)
	if err != nil {
		return objectstore.Credential{}, err
	}
	now := time.Now()
	expires := now.Add(s.cfg.Lifetime()).UTC()
	opts := applicationcredentials.CreateOpts{
		Name:        AppCredName(bucket, now),
		Description: fmt.Sprintf("etcd backups in container %s (gardener-extension-backup)", bucket),
		ExpiresAt:   &expires,
	}
	for _, r := range s.cfg.GeneratedCredentials.Roles {
		opts.Roles = append(opts.Roles, applicationcredentials.Role{Name: r})
	}
	restrict := s.cfg.GeneratedCredentials.RestrictToContainer()
	if restrict {
		u, err := url.Parse(s.store.client.Endpoint)
		if err != nil {
			return objectstore.Credential{}, fmt.Errorf("object-store endpoint: %w", err)
		}
		opts.AccessRules = ContainerAccessRules(u.Path, bucket)
	}
	ac, err := applicationcredentials.Create(ctx, idc, user, opts).Extract()
	if len(opts.Roles) > 0 && (gophercloud.ResponseCodeIs(err, http.StatusNotFound) || gophercloud.ResponseCodeIs(err, http.StatusBadRequest)) {
		// Keystone answers 404 for a role name it does not know and 400 for a role the user does
		// not hold on the project (keystone/api/users.py); the user is the session's own.
		return objectstore.Credential{}, fmt.Errorf("%w: spec.providerConfig.generatedCredentials.roles: Keystone refused to create an application credential "+
			"for container %q with the roles %q: each must be a role the secret's user holds on the project: %w", objectstore.ErrInvalidConfig, bucket, s.cfg.GeneratedCredentials.Roles, err)
	}
	if err != nil {
		return objectstore.Credential{}, fmt.Errorf("creating an application credential for container %q: %w", bucket, classify(err))
	}
	cred := objectstore.Credential{ID: ac.ID, Data: s.credentialData(ac)}
	if restrict {
		if err := s.probe(ctx, cred, bucket); err != nil {
			// Never hand out a credential the object store refuses: backups would stop.
			if delErr := applicationcredentials.Delete(ctx, idc, user, ac.ID).ExtractErr(); delErr != nil && !gophercloud.ResponseCodeIs(delErr, http.StatusNotFound) {
				err = errors.Join(err, fmt.Errorf("deleting the refused application credential %s: %w", ac.ID, classify(delErr)))
			}
			return objectstore.Credential{}, err
		}
	}
	return cred, nil
}

// credentialData is the generated secret of an application credential: how to reach Keystone
// and Swift (as in the operator's secret) and the credential; never the operator's username or
// password, which etcd-backup-restore would take for a second kind of credentials and refuse.
// domainName and tenantName are the operator's: authentication by credential ID ignores them,
// but etcd-backup-restore requires them (bucketCheck made sure they are set).
func (s *keystoneIssuer) credentialData(ac *applicationcredentials.ApplicationCredential) map[string][]byte {
	data := map[string][]byte{
		KeyAuthURL:                     []byte(s.store.creds.auth.IdentityEndpoint),
		KeyRegion:                      []byte(s.store.creds.region),
		KeyDomainName:                  []byte(s.store.creds.domainName),
		KeyTenantName:                  []byte(s.store.creds.tenantName),
		KeyApplicationCredentialID:     []byte(ac.ID),
		KeyApplicationCredentialName:   []byte(ac.Name),
		KeyApplicationCredentialSecret: []byte(ac.Secret),
	}
	if len(s.store.creds.caCert) > 0 {
		data[KeyCACert] = s.store.creds.caCert
	}
	if s.store.creds.insecure {
		data[KeyInsecure] = []byte("true")
	}
	return data
}

// probe authenticates with a new credential and reads the container: a cloud whose Swift does
// not check access rules refuses such tokens altogether.
func (s *keystoneIssuer) probe(ctx context.Context, cred objectstore.Credential, bucket string) error {
	c, err := parseCredentials(cred.Data, s.store.creds.region)
	if err != nil {
		return err
	}
	probe := &store{creds: c, httpClient: s.store.httpClient, pageSize: s.store.pageSize, rewrite: s.store.rewrite}
	sc, err := probe.swift(ctx)
	if err == nil {
		_, err = containers.Get(ctx, sc, bucket, nil).Extract()
		err = classify(err)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, objectstore.ErrUnauthenticated), errors.Is(err, objectstore.ErrForbidden):
		return fmt.Errorf("%w: the cloud refuses application credentials restricted to container %q by access rules "+
			"(Swift's authtoken middleware checks them only with service_type = object-store): set "+
			"generatedCredentials.accessRules: false for project-wide credentials, or allowPassThrough: true "+
			"to keep the operator's (%v)", objectstore.ErrUnsupported, bucket, err) // the cause as text: this is a configuration problem, not unauthenticated operator credentials
	}
	return fmt.Errorf("trying the new application credential on container %q: %w", bucket, err)
}

// RevokeCredentials implements objectstore.CredentialIssuer: the bucket's application
// credentials not kept are deleted.
func (s *keystoneIssuer) RevokeCredentials(ctx context.Context, bucket string, keep []string) error {
	if err := osapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	idc, user, err := s.identity(ctx)
	if err != nil {
		return err
	}
	pages, err := applicationcredentials.List(idc, user, nil).AllPages(ctx)
	if err != nil {
		return fmt.Errorf("listing application credentials: %w", classify(err))
	}
	all, err := applicationcredentials.ExtractApplicationCredentials(pages)
	if err != nil {
		return fmt.Errorf("listing application credentials: %w", err)
	}
	for _, ac := range all {
		if !ofBucket(ac.Name, bucket) || slices.Contains(keep, ac.ID) {
			continue
		}
		err := applicationcredentials.Delete(ctx, idc, user, ac.ID).ExtractErr()
		if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return fmt.Errorf("deleting application credential %s: %w", ac.ID, classify(err))
		}
	}
	if len(keep) > 0 {
		return nil
	}
	return s.deleteAccessRules(ctx, idc, user, bucket)
}

// deleteAccessRules deletes the user's access rules for the container once none of the
// bucket's credentials is left: Keystone keeps a user's rules after their credentials are
// deleted (and shares them between credentials with the same rules).
func (s *keystoneIssuer) deleteAccessRules(ctx context.Context, idc *gophercloud.ServiceClient, user, bucket string) error {
	pages, err := applicationcredentials.ListAccessRules(idc, user).AllPages(ctx)
	if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		return nil // a Keystone without access rules
	}
	if err != nil {
		return fmt.Errorf("listing access rules: %w", classify(err))
	}
	rules, err := applicationcredentials.ExtractAccessRules(pages)
	if err != nil {
		return fmt.Errorf("listing access rules: %w", err)
	}
	u, err := url.Parse(s.store.client.Endpoint)
	if err != nil {
		return fmt.Errorf("object-store endpoint: %w", err)
	}
	ours := map[applicationcredentials.AccessRule]bool{}
	for _, r := range ContainerAccessRules(u.Path, bucket) {
		ours[r] = true
	}
	for _, r := range rules {
		if !ours[applicationcredentials.AccessRule{Service: r.Service, Method: r.Method, Path: r.Path}] {
			continue
		}
		err := applicationcredentials.DeleteAccessRule(ctx, idc, user, r.ID).ExtractErr()
		if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return fmt.Errorf("deleting access rule %s: %w", r.ID, classify(err))
		}
	}
	return nil
}
