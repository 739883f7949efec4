// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Account keys: an account has exactly two. The generated secret publishes one; rotating
// regenerates the other and publishes it, so that the published key stays valid meanwhile.
var accountKeys = []string{"key1", "key2"}

// accountKeyIssuer is Azure's issuer (azureapi.IssuerAccountKey): the keys of the storage account
// the extension manages for the bucket, reached through the management plane.
type accountKeyIssuer struct{ s *armStore }

var _ objectstore.StoreKeysIssuer = (*accountKeyIssuer)(nil)

// IssuesStoreKeys implements objectstore.StoreKeysIssuer: an account key is the account's, and
// provider-azure, given the account back, publishes and rotates the same keys
// (docs/azure.md, "Handing back").
func (*accountKeyIssuer) IssuesStoreKeys() {}

// IssueCredential implements objectstore.CredentialIssuer. The first credential is key1 as the
// account was created with it (nobody else has been given it); a rotation regenerates the key not
// in use and returns it, which also invalidates a value issued before but never recorded. Keys
// are read or regenerated only on an account that is ours.
func (iss *accountKeyIssuer) IssueCredential(ctx context.Context, bucket string, inUse []string) (objectstore.Credential, error) {
	s := iss.s
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return objectstore.Credential{}, err
	}
	acct, err := s.ownAccount(ctx, bucket)
	if err != nil {
		return objectstore.Credential{}, err
	}
	if len(inUse) == 0 {
		first := accountKeys[0]
		if adopted(acct) {
			// The key the incumbent published, which the sidecars hold: never regenerated here.
			k, err := s.incumbentsKey(ctx, bucket, deref(acct.Name))
			if err != nil {
				return objectstore.Credential{}, err
			}
			first = k
		}
		a, err := s.accountAccess(ctx, bucket, acct, first, nil)
		if err != nil {
			return objectstore.Credential{}, err
		}
		return objectstore.Credential{ID: first, Data: a.secretData()}, nil
	}
	i := slices.IndexFunc(accountKeys, func(k string) bool { return !slices.Contains(inUse, k) })
	if i < 0 {
		return objectstore.Credential{}, objectstore.Invalidf("both account keys are in use (the previous one is still within its grace period): a rotation has to wait until it is revoked")
	}
	keyName := accountKeys[i]
	res, err := s.accounts.RegenerateKey(ctx, ResourceGroupName(bucket), deref(acct.Name), armstorage.AccountRegenerateKeyParameters{KeyName: to.Ptr(keyName)}, nil)
	if err != nil {
		return objectstore.Credential{}, fmt.Errorf("regenerating %s of storage account %q: %w", keyName, deref(acct.Name), classify(err))
	}
	a, err := s.accountAccess(ctx, bucket, acct, keyName, res.Keys)
	if err != nil {
		return objectstore.Credential{}, err
	}
	return objectstore.Credential{ID: keyName, Data: a.secretData()}, nil
}

// Location implements objectstore.CredentialIssuer: the subscription the operator's
// management-plane credentials reach, where each bucket's storage account (and its keys) lives.
func (iss *accountKeyIssuer) Location(context.Context) (string, error) {
	return "azure-subscription:" + iss.s.subscription, nil
}

var _ objectstore.CredentialIssuer = (*accountKeyIssuer)(nil)

// HeldIn implements objectstore.CredentialIssuer: the keys of the bucket's account that an
// account key secret's data (storageAccount, storageKey) holds.
func (iss *accountKeyIssuer) HeldIn(ctx context.Context, bucket string, data map[string][]byte) ([]string, error) {
	acct, state, err := iss.s.findAccount(ctx, bucket)
	if err != nil {
		return nil, err
	}
	name := deref(acct.Name)
	if state != accountOurs || string(data[KeyStorageAccount]) != name || len(data[KeyStorageKey]) == 0 {
		return nil, nil
	}
	res, err := iss.s.accounts.ListKeys(ctx, ResourceGroupName(bucket), name, nil)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the keys of storage account %q: %w", name, classify(err))
	}
	var held []string
	for _, k := range res.Keys {
		if k != nil && deref(k.Value) == string(data[KeyStorageKey]) {
			held = append(held, strings.ToLower(deref(k.KeyName)))
		}
	}
	return held, nil
}

// RevokeCredentials implements objectstore.CredentialIssuer: every key not kept is regenerated
// (and its new value never handed out). An account that is gone has no keys left; one that is not
// ours is an ownership error and its keys are not touched.
func (iss *accountKeyIssuer) RevokeCredentials(ctx context.Context, bucket string, keep []string) error {
	s := iss.s
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	acct, err := s.ownAccount(ctx, bucket)
	if err != nil {
		if errors.Is(err, objectstore.ErrBucketNotFound) {
			return nil
		}
		return err
	}
	for _, k := range accountKeys {
		if slices.Contains(keep, k) {
			continue
		}
		_, err := s.accounts.RegenerateKey(ctx, ResourceGroupName(bucket), deref(acct.Name), armstorage.AccountRegenerateKeyParameters{KeyName: to.Ptr(k)}, nil)
		switch {
		case isNotFound(err):
			return nil // the account is gone, and its keys with it
		case err != nil:
			return fmt.Errorf("revoking %s of storage account %q: %w", k, deref(acct.Name), classify(err))
		}
	}
	return nil
}

// CredentialReach implements objectstore.CredentialIssuer: an account key is the whole storage
// account's, which this extension creates for the one bucket.
func (iss *accountKeyIssuer) CredentialReach(bucket string) string {
	return fmt.Sprintf("a key of storage account %q (or %q, when adopted from gardener-extension-provider-azure), which exists for bucket %q alone: it reaches everything in that account (its containers, and its queues, tables and files if anybody made any) and nothing outside it", AccountName(bucket), IncumbentAccountName(bucket), bucket)
}
