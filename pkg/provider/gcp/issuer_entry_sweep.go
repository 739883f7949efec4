// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"path"
	"strings"

	iam "google.golang.org/api/iam/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// SweepEntryCredentials implements objectstore.EntryCredentialIssuer: every service account of
// the project (projects.serviceAccounts.list, in pages of 100, descriptions included) whose ID
// starts `gbke-` and whose description is the one entryDescription writes for bucket, a prefix
// and an access whose EntryServiceAccountID is that ID, is swept unless the sweep keeps it: its
// keys (retiring ones spared before their time with KeepRetiring, and the account with them),
// then its binding on the managed folder, the folder once nobody is bound on it and it holds no
// objects, and the account (deleteEntryAccount, as revocation). The cost is the list's pages and
// the deletions, nothing per account kept. The first error stops it; run again, it resumes (an
// account whose keys or binding went is found again by its marks until it goes itself).
func (s *entryIssuer) SweepEntryCredentials(ctx context.Context, bucket string, sweep objectstore.EntrySweep) (int, error) {
	var accounts []*iam.ServiceAccount
	err := s.iam.Projects.ServiceAccounts.List("projects/"+s.projectID).PageSize(listPageSize).Pages(ctx, func(page *iam.ListServiceAccountsResponse) error {
		accounts = append(accounts, page.Accounts...)
		return nil
	})
	if err != nil {
		return 0, iamError("listing the service accounts of project "+s.projectID+" (iam.serviceAccounts.list)", err)
	}
	kept := 0
	for _, sa := range accounts {
		prefix, access, ours := entryMarks(sa, bucket)
		if !ours {
			continue // another bucket's, or not this extension's: not touched
		}
		if sweep.Keeps(prefix.String(), access) {
			kept++
			continue
		}
		left, err := s.deleteEntryKeys(ctx, sa, nil, sweep.KeepRetiring)
		if err != nil {
			return kept, err
		}
		if left > 0 {
			kept++ // retiring keys before their time: the account stays with them
			continue
		}
		if err := s.deleteEntryAccount(ctx, bucket, prefix, access, sa); err != nil {
			return kept, err
		}
	}
	return kept, nil
}

// entryMarks reads the prefix and access of an entry account of bucket from its description;
// ours is false unless the description is exactly what entryDescription writes for bucket, that
// prefix and that access, and the account's ID is EntryServiceAccountID's for them.
func entryMarks(sa *iam.ServiceAccount, bucket string) (prefix objectstore.Prefix, access objectstore.EntryAccess, ours bool) {
	id, _, _ := strings.Cut(path.Base(sa.Name), "@")
	rest, ok := strings.CutPrefix(sa.Description, "etcd backups under ")
	if !ok || !strings.HasPrefix(id, "gbke-") {
		return objectstore.Prefix{}, "", false
	}
	head, ok := strings.CutSuffix(rest, " of bucket "+bucket+" (gardener-extension-backup)")
	i := strings.LastIndex(head, " (")
	if !ok || i < 0 {
		return objectstore.Prefix{}, "", false
	}
	access = objectstore.EntryAccess(strings.TrimSuffix(head[i+2:], ")"))
	prefix, err := objectstore.NestedPrefix(strings.TrimSuffix(head[:i], "/"))
	if err != nil || entryDescription(bucket, prefix, access) != sa.Description || EntryServiceAccountID(bucket, prefix, access) != id {
		return objectstore.Prefix{}, "", false
	}
	return prefix, access, true
}
