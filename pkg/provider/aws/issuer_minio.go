// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/minio/madmin-go/v3"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// minioIssuer issues bucket-scoped credentials that are MinIO users, one per issuance,
// each with the bucket's policy: exactly what etcd-backup-restore does, in that bucket only.
type minioIssuer struct {
	admin *madmin.AdminClient
	// template is what a credential keeps of the operator's secret (credentialTemplate).
	template map[string][]byte
	// server is the MinIO server's host:port, where its users live.
	server string
}

var _ objectstore.CredentialIssuer = (*minioIssuer)(nil)

func newMinIOIssuer(d map[string][]byte) (*minioIssuer, error) {
	endpoint := string(d[KeyEndpoint])
	u, err := url.Parse(endpoint)
	if endpoint == "" || err != nil || u.Host == "" {
		return nil, objectstore.Invalidf("providerConfig.generatedCredentials.issuer %s needs the secret's %q (the MinIO server's URL)", "MinIO", KeyEndpoint)
	}
	if len(d[KeyAccessKeyID]) == 0 || len(d[KeySecretAccessKey]) == 0 {
		return nil, objectstore.Invalidf("providerConfig.generatedCredentials needs the secret's %q and %q (MinIO's admin API takes no workload identity)", KeyAccessKeyID, KeySecretAccessKey)
	}
	transportOptions, err := transportOptionsFor(d)
	if err != nil {
		return nil, err
	}
	transport, err := httpclient.RoundTripper(transportOptions)
	if err != nil {
		return nil, err
	}
	admin, err := madmin.NewWithOptions(u.Host, &madmin.Options{
		Creds:     credentials.NewStaticV4(string(d[KeyAccessKeyID]), string(d[KeySecretAccessKey]), ""),
		Secure:    u.Scheme == "https",
		Transport: transport,
	})
	if err != nil {
		return nil, objectstore.Invalidf("MinIO admin client: %w", err)
	}
	return &minioIssuer{admin: admin, template: credentialTemplate(d), server: u.Host}, nil
}

// userPrefix starts the access keys of a bucket's users: "geb" and 7 hex digits of the bucket
// name's SHA-256 (MinIO access keys are at most 20 characters; 10 random hex digits follow). It
// only makes them recognisable: which bucket a user belongs to is its policy, named after the
// whole bucket name, so two buckets whose hashes collide never revoke each other's users.
func userPrefix(bucket string) string {
	sum := sha256.Sum256([]byte(bucket))
	return "geb" + hex.EncodeToString(sum[:])[:7]
}

func policyName(bucket string) string { return "gardener-backup-" + bucket }

// IssueCredential implements objectstore.CredentialIssuer: a new user with the bucket's policy.
// A user issued before but never recorded stays until RevokeCredentials, which the controller
// calls once the new one is published; issuance first removes such leftovers.
func (m *minioIssuer) IssueCredential(ctx context.Context, bucket string, inUse []string) (objectstore.Credential, error) {
	if err := m.RevokeCredentials(ctx, bucket, inUse); err != nil {
		return objectstore.Credential{}, err
	}
	policy, err := bucketPolicy(bucket)
	if err != nil {
		return objectstore.Credential{}, err
	}
	if err := m.admin.AddCannedPolicy(ctx, policyName(bucket), policy); err != nil {
		return objectstore.Credential{}, minioError("writing the bucket's MinIO policy", err)
	}
	suffix, secret := make([]byte, 5), make([]byte, 24)
	_, _ = rand.Read(suffix)
	_, _ = rand.Read(secret)
	accessKey, secretKey := userPrefix(bucket)+hex.EncodeToString(suffix), hex.EncodeToString(secret)
	if err := m.admin.AddUser(ctx, accessKey, secretKey); err != nil {
		return objectstore.Credential{}, minioError("creating a MinIO user", err)
	}
	if _, err := m.admin.AttachPolicy(ctx, madmin.PolicyAssociationReq{Policies: []string{policyName(bucket)}, User: accessKey}); err != nil {
		_ = m.admin.RemoveUser(ctx, accessKey)
		return objectstore.Credential{}, minioError("attaching the bucket's policy", err)
	}
	data := maps.Clone(m.template)
	data[KeyAccessKeyID], data[KeySecretAccessKey] = []byte(accessKey), []byte(secretKey)
	return objectstore.Credential{ID: accessKey, Data: data}, nil
}

// RevokeCredentials implements objectstore.CredentialIssuer: every user of the bucket not kept
// is removed; with nothing kept, the bucket's policy too.
func (m *minioIssuer) RevokeCredentials(ctx context.Context, bucket string, keep []string) error {
	users, err := m.admin.ListUsers(ctx)
	if err != nil {
		return minioError("listing MinIO users", err)
	}
	for name, info := range users {
		if info.PolicyName == policyName(bucket) && strings.HasPrefix(name, userPrefix(bucket)) && !slices.Contains(keep, name) {
			if err := m.admin.RemoveUser(ctx, name); err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminNoSuchUser" {
				return minioError("removing MinIO user "+name, err)
			}
		}
	}
	if len(keep) == 0 {
		if err := m.admin.RemoveCannedPolicy(ctx, policyName(bucket)); err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminNoSuchPolicy" {
			return minioError("removing the bucket's MinIO policy", err)
		}
	}
	return nil
}
