// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	rawstorage "google.golang.org/api/storage/v1"
)

// The entry issuer's managed folders: GCS applies a managed folder's IAM policy to the objects
// whose names start with its name (https://cloud.google.com/storage/docs/managed-folders).

// ensureManagedFolder creates the managed folder name in bucket unless it exists. GCS creates
// managed folders only in buckets with uniform bucket-level access, which EnsureBucket sets.
func (s *entryIssuer) ensureManagedFolder(ctx context.Context, bucket, name string) error {
	_, err := s.raw.ManagedFolders.Insert(bucket, &rawstorage.ManagedFolder{Name: name}).Context(ctx).Do()
	if err == nil || statusOf(err) == http.StatusConflict {
		return nil
	}
	return fmt.Errorf("creating managed folder %q in bucket %q (GCS needs uniform bucket-level access for it): %w", name, bucket, classifyBucket(err))
}

// updateFolderBinding binds (or, with bind false, unbinds) email on the managed folder with
// role, writing the policy only when it differs; its etag guards against a concurrent change,
// which fails the pass to be retried. It returns whether the policy binds anybody afterwards.
func (s *entryIssuer) updateFolderBinding(ctx context.Context, bucket, folder, role, email string, bind bool) (anyBound bool, err error) {
	policy, err := s.raw.ManagedFolders.GetIamPolicy(bucket, folder).Context(ctx).Do()
	if err != nil {
		return false, fmt.Errorf("reading the IAM policy of managed folder %q of bucket %q: %w", folder, bucket, classify(err))
	}
	member := "serviceAccount:" + email
	changed := false
	i := slices.IndexFunc(policy.Bindings, func(b *rawstorage.PolicyBindings) bool { return b.Role == role && b.Condition == nil })
	switch {
	case bind && i < 0:
		policy.Bindings = append(policy.Bindings, &rawstorage.PolicyBindings{Role: role, Members: []string{member}})
		changed = true
	case bind && !slices.Contains(policy.Bindings[i].Members, member):
		policy.Bindings[i].Members = append(policy.Bindings[i].Members, member)
		changed = true
	case !bind && i >= 0 && slices.Contains(policy.Bindings[i].Members, member):
		policy.Bindings[i].Members = slices.DeleteFunc(policy.Bindings[i].Members, func(m string) bool { return m == member })
		if len(policy.Bindings[i].Members) == 0 {
			policy.Bindings = slices.Delete(policy.Bindings, i, i+1)
		}
		changed = true
	}
	anyBound = slices.ContainsFunc(policy.Bindings, func(b *rawstorage.PolicyBindings) bool { return len(b.Members) > 0 })
	if !changed {
		return anyBound, nil
	}
	if _, err := s.raw.ManagedFolders.SetIamPolicy(bucket, folder, policy).Context(ctx).Do(); err != nil {
		return false, fmt.Errorf("setting the IAM policy of managed folder %q of bucket %q: %w", folder, bucket, classify(err))
	}
	return anyBound, nil
}
