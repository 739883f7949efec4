// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"

	gcsiam "cloud.google.com/go/iam"
	"cloud.google.com/go/storage"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	rawstorage "google.golang.org/api/storage/v1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// iamIssuer issues bucket-scoped credentials that are keys of one service account per bucket, bound
// with roles/storage.objectAdmin and roles/storage.legacyBucketReader on that bucket only: what
// etcd-backup-restore and the entry controller do there (the latter reads the bucket's deferral
// rule back), and nothing in the project or in another bucket. The account
// holds the published key and, during the grace period, the previous one.
type iamIssuer struct {
	client    *storage.Client // with the cloud-platform scope, for the buckets' IAM policies
	projectID string
	iam       *iam.Service
	raw       *rawstorage.Service // the JSON API, for managed folders and their IAM policies (entry credentials)
	endpoint  []byte              // the operator's storageAPIEndpoint, handed on with the key
	http      *http.Client        // the authorized client, for APIs without a Go client here (Cloud Quotas)
}

var _ objectstore.CredentialIssuer = (*iamIssuer)(nil)

// newIAMIssuer builds the service-account key issuer: its clients need the cloud-platform scope
// for the IAM API.
func (p *Provider) newIAMIssuer(ctx context.Context, creds provider.Credentials) (*iamIssuer, error) {
	httpClient, projectID, err := p.authorizedClient(creds, cloudPlatformScope)
	if err != nil {
		return nil, err
	}
	client, err := newStorageClient(ctx, httpClient, creds.Data)
	if err != nil {
		return nil, err
	}
	opts := []option.ClientOption{option.WithHTTPClient(httpClient)}
	if p.IAMEndpoint != "" {
		opts = append(opts, option.WithEndpoint(p.IAMEndpoint))
	}
	svc, err := iam.NewService(ctx, opts...)
	if err != nil {
		return nil, objectstore.Invalidf("building the IAM client: %v", err)
	}
	raw, err := newRawService(ctx, httpClient, creds.Data)
	if err != nil {
		return nil, err
	}
	return &iamIssuer{client: client, projectID: projectID, iam: svc, raw: raw, endpoint: creds.Data[KeyStorageAPIEndpoint], http: httpClient}, nil
}

// BucketRole is the role a bucket's service account has on its bucket's objects.
const BucketRole = "roles/storage.objectAdmin"

// ReaderRole is the role a bucket's service account has besides BucketRole: storage.buckets.get
// and storage.objects.list on its bucket, so that an entry reads back the bucket's deferral rule
// (see DeferDeletion). It grants no write of the bucket and no read of its IAM policy.
const ReaderRole = "roles/storage.legacyBucketReader"

// bucketRoles are the roles a bucket's service account is bound with on its bucket.
var bucketRoles = []string{BucketRole, ReaderRole}

// ServiceAccountID is the account ID of bucket's service account: GCP allows 6 to 30
// characters, fewer than a bucket name has, so it is derived from a hash of the name.
func ServiceAccountID(bucket string) string {
	sum := sha256.Sum256([]byte(bucket))
	return "gbkp-" + hex.EncodeToString(sum[:])[:25]
}

func accountDescription(bucket string) string {
	return "etcd backups in bucket " + bucket + " (gardener-extension-backup)"
}

func (s *iamIssuer) accountName(bucket string) string {
	return "projects/" + s.projectID + "/serviceAccounts/" + ServiceAccountID(bucket) + "@" + s.projectID + ".iam.gserviceaccount.com"
}

// ensureAccount returns the email of bucket's service account, creating it if needed. An
// account of that ID that another bucket or somebody else describes is not taken over.
func (s *iamIssuer) ensureAccount(ctx context.Context, bucket string) (string, error) {
	name := s.accountName(bucket)
	sa, err := s.iam.Projects.ServiceAccounts.Get(name).Context(ctx).Do()
	if errors.Is(iamError("", err), objectstore.ErrNotFound) {
		displayName := bucket
		if len(displayName) > 100 {
			displayName = displayName[:100]
		}
		sa, err = s.iam.Projects.ServiceAccounts.Create("projects/"+s.projectID, &iam.CreateServiceAccountRequest{
			AccountId:      ServiceAccountID(bucket),
			ServiceAccount: &iam.ServiceAccount{DisplayName: displayName, Description: accountDescription(bucket)},
		}).Context(ctx).Do()
	}
	if err != nil {
		return "", iamError("service account for bucket "+bucket, err)
	}
	if sa.Description != accountDescription(bucket) {
		return "", fmt.Errorf("%w: service account %s is not the one this extension made for bucket %q (its description is %q)", objectstore.ErrOwnedByOther, sa.Email, bucket, sa.Description)
	}
	return sa.Email, nil
}

// setBinding binds (or, with bind false, unbinds) the account on the bucket with bucketRoles; the
// policy's etag guards against a concurrent change, which fails the pass to be retried.
func (s *iamIssuer) setBinding(ctx context.Context, bucket, email string, bind bool) error {
	return setBucketBinding(ctx, s.client, bucket, email, bind)
}

// setBucketBinding binds (or unbinds) email on bucket with bucketRoles, writing the policy only
// when a binding differs.
func setBucketBinding(ctx context.Context, client *storage.Client, bucket, email string, bind bool) error {
	handle := client.Bucket(bucket).IAM()
	policy, err := handle.Policy(ctx)
	if err != nil {
		return fmt.Errorf("reading the IAM policy of bucket %q: %w", bucket, classify(err))
	}
	member := "serviceAccount:" + email
	changed := false
	for _, role := range bucketRoles {
		if policy.HasRole(member, gcsiam.RoleName(role)) == bind {
			continue
		}
		changed = true
		if bind {
			policy.Add(member, gcsiam.RoleName(role))
		} else {
			policy.Remove(member, gcsiam.RoleName(role))
		}
	}
	if !changed {
		return nil
	}
	if err := handle.SetPolicy(ctx, policy); err != nil {
		return fmt.Errorf("setting the IAM policy of bucket %q: %w", bucket, classify(err))
	}
	return nil
}

// deleteKeys deletes the account's user-managed keys not in keep. A missing account has none.
func (s *iamIssuer) deleteKeys(ctx context.Context, name string, keep []string) (exists bool, err error) {
	list, err := s.iam.Projects.ServiceAccounts.Keys.List(name).KeyTypes("USER_MANAGED").Context(ctx).Do()
	if err != nil {
		err = iamError("listing the keys of "+name, err)
		if errors.Is(err, objectstore.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	for _, k := range list.Keys {
		if k.KeyType != "USER_MANAGED" || slices.Contains(keep, path.Base(k.Name)) {
			continue
		}
		if _, err := s.iam.Projects.ServiceAccounts.Keys.Delete(k.Name).Context(ctx).Do(); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
			return true, iamError("deleting key "+path.Base(k.Name), err)
		}
	}
	return true, nil
}

// IssueCredential implements objectstore.CredentialIssuer: the bucket's account (created and
// bound on the bucket if needed) gets a new key; its keys not in use go first, a key issued by
// a pass that failed before publishing it among them.
func (s *iamIssuer) IssueCredential(ctx context.Context, bucket string, inUse []string) (objectstore.Credential, error) {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return objectstore.Credential{}, err
	}
	email, err := s.ensureAccount(ctx, bucket)
	if err != nil {
		return objectstore.Credential{}, err
	}
	if err := s.setBinding(ctx, bucket, email, true); err != nil {
		return objectstore.Credential{}, err
	}
	name := s.accountName(bucket)
	if _, err := s.deleteKeys(ctx, name, inUse); err != nil {
		return objectstore.Credential{}, err
	}
	key, err := s.iam.Projects.ServiceAccounts.Keys.Create(name, &iam.CreateServiceAccountKeyRequest{
		PrivateKeyType: "TYPE_GOOGLE_CREDENTIALS_FILE", KeyAlgorithm: "KEY_ALG_RSA_2048",
	}).Context(ctx).Do()
	if err != nil {
		return objectstore.Credential{}, iamError("creating a key of "+email, err)
	}
	file, err := base64.StdEncoding.DecodeString(key.PrivateKeyData)
	if err != nil {
		return objectstore.Credential{}, fmt.Errorf("the IAM API returned a key of %s that is not base64", email)
	}
	if _, err := parseServiceAccount(file); err != nil {
		return objectstore.Credential{}, fmt.Errorf("the IAM API returned an unusable key of %s: %w", email, err)
	}
	data := map[string][]byte{KeyServiceAccountJSON: file}
	if len(s.endpoint) > 0 {
		data[KeyStorageAPIEndpoint] = s.endpoint
	}
	return objectstore.Credential{ID: path.Base(key.Name), Data: data}, nil
}

// RevokeCredentials implements objectstore.CredentialIssuer: the account's keys not kept are
// deleted; with nothing kept, its binding on the bucket (if the bucket is still there) and the
// account too. GCP keeps access tokens already minted with a deleted key valid until they expire
// (at most an hour).
func (s *iamIssuer) RevokeCredentials(ctx context.Context, bucket string, keep []string) error {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	name := s.accountName(bucket)
	sa, err := s.iam.Projects.ServiceAccounts.Get(name).Context(ctx).Do()
	switch {
	case errors.Is(iamError("", err), objectstore.ErrNotFound):
		return nil
	case err != nil:
		return iamError("service account for bucket "+bucket, err)
	case sa.Description != accountDescription(bucket):
		return nil // somebody else's account of that ID: none of its keys is ours
	}
	exists, err := s.deleteKeys(ctx, name, keep)
	if err != nil || !exists || len(keep) > 0 {
		return err
	}
	email := path.Base(name)
	if err := s.setBinding(ctx, bucket, email, false); err != nil && !errors.Is(err, objectstore.ErrBucketNotFound) && !errors.Is(err, objectstore.ErrNotFound) {
		return err
	}
	if _, err := s.iam.Projects.ServiceAccounts.Delete(name).Context(ctx).Do(); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
		return iamError("deleting service account "+email, err)
	}
	return nil
}

// HeldIn implements objectstore.CredentialIssuer: the operator's secret never holds a key of a
// service account this issuer created.
func (s *iamIssuer) HeldIn(context.Context, string, map[string][]byte) ([]string, error) {
	return nil, nil
}

// CredentialReach implements objectstore.CredentialIssuer.
func (s *iamIssuer) CredentialReach(bucket string) string {
	return fmt.Sprintf("a key of a service account of its own, bound with %s and %s on bucket %q only; GCS checks it on every request, rewrites and composes included, so it reaches no other bucket", BucketRole, ReaderRole, bucket)
}
