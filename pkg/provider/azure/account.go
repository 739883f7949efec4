// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Tags the extension puts on what it creates. A resource group or storage account is this
// extension's only when it carries both, the bucket's name included; anything else is somebody
// else's and is never read, changed or deleted.
const (
	TagBucket    = "gardener-backup-bucket"
	TagManagedBy = "managed-by"
	managedBy    = "gardener-extension-backup"
)

// AccountName is the storage account of a bucket: "bkp" and 21 hex digits of the name's SHA-256
// (account names are global, 3-24 lowercase letters and digits).
func AccountName(bucket string) string {
	sum := sha256.Sum256([]byte(bucket))
	return "bkp" + hex.EncodeToString(sum[:])[:21]
}

// ResourceGroupName is the resource group of a bucket: its name, as gardener-extension-provider-azure
// names it.
func ResourceGroupName(bucket string) string { return bucket }

// ours is true for a resource group or storage account this extension created for bucket.
func ours(tags map[string]*string, bucket string) bool {
	return tags != nil && deref(tags[TagBucket]) == bucket && deref(tags[TagManagedBy]) == managedBy
}

func tagsFor(bucket string) map[string]*string {
	return map[string]*string{TagBucket: to.Ptr(bucket), TagManagedBy: to.Ptr(managedBy)}
}

// notOurs is the ownership error for an account of bucket's name that this extension did not
// create for it.
func notOurs(rg, name, bucket string) error {
	return fmt.Errorf("%w: storage account %q in resource group %q is not tagged %s=%s and %s=%s: this extension did not create it for the bucket and does not touch it",
		objectstore.ErrOwnedByOther, name, rg, TagBucket, bucket, TagManagedBy, managedBy)
}

// ownAccount reads bucket's storage account and returns it (its Name set) only if it is this
// extension's for the bucket: created by it, or adopted from the incumbent (adopt). It is
// called before every act on the account (keys, data plane, rule, deletion): an account that is
// not ours is ErrOwnedByOther (the incumbent's before its adoption too), a missing one
// ErrBucketNotFound.
func (s *armStore) ownAccount(ctx context.Context, bucket string) (armstorage.Account, error) {
	rg := ResourceGroupName(bucket)
	acct, state, err := s.findAccount(ctx, bucket)
	switch {
	case err != nil:
		return armstorage.Account{}, err
	case state == accountMissing:
		return armstorage.Account{}, fmt.Errorf("storage account %q of container %q: %w", AccountName(bucket), bucket, objectstore.ErrBucketNotFound)
	case state == accountIncumbents:
		return armstorage.Account{}, notAdopted(rg, deref(acct.Name), bucket)
	case state == accountForeign:
		return armstorage.Account{}, notOurs(rg, deref(acct.Name), bucket)
	}
	return acct, nil
}

// sameLocation compares Azure locations, which come back lowercase without spaces
// ("West Europe" is "westeurope").
func sameLocation(a, b string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "")) }
	return norm(a) == norm(b)
}

// accountDrift returns the update that brings an account to the hardened, declared state, or
// nil when it is there.
func accountDrift(a armstorage.Account, sku string) *armstorage.AccountUpdateParameters {
	p := a.Properties
	if p == nil {
		p = &armstorage.AccountProperties{}
	}
	want := armstorage.AccountPropertiesUpdateParameters{}
	drift := false
	if p.EnableHTTPSTrafficOnly == nil || !*p.EnableHTTPSTrafficOnly {
		want.EnableHTTPSTrafficOnly, drift = to.Ptr(true), true
	}
	// TLS 1.2 at least: a stricter minimum (TLS1_3) somebody set is kept.
	if p.MinimumTLSVersion == nil || (*p.MinimumTLSVersion != armstorage.MinimumTLSVersionTLS12 && *p.MinimumTLSVersion != armstorage.MinimumTLSVersion("TLS1_3")) {
		want.MinimumTLSVersion, drift = to.Ptr(armstorage.MinimumTLSVersionTLS12), true
	}
	if p.AllowBlobPublicAccess == nil || *p.AllowBlobPublicAccess {
		want.AllowBlobPublicAccess, drift = to.Ptr(false), true
	}
	if p.AllowSharedKeyAccess != nil && !*p.AllowSharedKeyAccess {
		// etcd-backup-restore authenticates with the account key.
		want.AllowSharedKeyAccess, drift = to.Ptr(true), true
	}
	up := &armstorage.AccountUpdateParameters{Properties: &want}
	if a.SKU == nil || a.SKU.Name == nil || string(*a.SKU.Name) != sku {
		up.SKU, drift = &armstorage.SKU{Name: to.Ptr(armstorage.SKUName(sku))}, true
	}
	if !drift {
		return nil
	}
	return up
}

// driftDetail names what accountDrift's update changes.
func driftDetail(up *armstorage.AccountUpdateParameters) string {
	var parts []string
	if p := up.Properties; p != nil {
		if p.EnableHTTPSTrafficOnly != nil {
			parts = append(parts, "HTTPS only")
		}
		if p.MinimumTLSVersion != nil {
			parts = append(parts, "minimum TLS "+string(*p.MinimumTLSVersion))
		}
		if p.AllowBlobPublicAccess != nil {
			parts = append(parts, "public blob access off")
		}
		if p.AllowSharedKeyAccess != nil {
			parts = append(parts, "shared key access on")
		}
	}
	if up.SKU != nil && up.SKU.Name != nil {
		parts = append(parts, "SKU "+string(*up.SKU.Name))
	}
	return strings.Join(parts, ", ")
}

// ensureAccount converges bucket's account (adopting the incumbent's, see adopt, or
// creating ours where there is none) and returns it. The incumbent's account is adopted only once
// nothing that can refuse the bucket does: its location is spec.region and the declared
// immutability fits the container's locked policy (an account tagged ours would be deleted with
// the bucket, so a refused one must stay the incumbent's).
//
// In a plan (log without apply), an account that is not there yet is returned without a Name.
func (s *armStore) ensureAccount(ctx context.Context, rg, name, bucket, region, sku string, cfg *azureapi.BackupBucketConfig, log *changeLog) (armstorage.Account, error) {
	a, state, err := s.findAccount(ctx, bucket)
	switch {
	case err != nil:
		return a, err
	case state == accountForeign:
		return a, notOurs(rg, deref(a.Name), bucket)
	case state == accountOurs || state == accountIncumbents:
		name = deref(a.Name)
		if a.Location != nil && !sameLocation(*a.Location, region) {
			return a, objectstore.Invalidf("storage account %q of bucket %q is in %q, but spec.region is %q: an account cannot move; set spec.region to the account's location", name, bucket, *a.Location, region)
		}
		if state == accountIncumbents {
			if _, err := s.readImmutability(ctx, rg, name, bucket, cfg); err != nil {
				return a, err
			}
			err := log.add(objectstore.BucketChange{Setting: "storage account tags " + TagBucket + ", " + TagManagedBy + ", " + TagAdoptedFrom, Action: objectstore.ChangeCreate, Detail: "adopted from provider-azure"}, func() error {
				a, err = s.adopt(ctx, rg, a, bucket)
				return err
			})
			if err != nil {
				return a, err
			}
			if !log.apply {
				a.Tags = adoptionTags(bucket)
			}
		}
		if up := accountDrift(a, sku); up != nil {
			err := log.add(objectstore.BucketChange{Setting: "storage account settings", Action: objectstore.ChangeUpdate, Detail: driftDetail(up)}, func() error {
				if _, err := s.accounts.Update(ctx, rg, name, *up, nil); err != nil {
					return fmt.Errorf("converging storage account %q: %w", name, classify(err))
				}
				return nil
			})
			if err != nil {
				return a, err
			}
		}
		return a, nil
	}
	if !log.apply {
		return armstorage.Account{}, log.add(objectstore.BucketChange{Setting: "storage account " + name, Action: objectstore.ChangeCreate, Detail: "with its container and every setting as declared"}, nil)
	}
	poller, err := s.accounts.BeginCreate(ctx, rg, name, armstorage.AccountCreateParameters{
		Kind:     to.Ptr(armstorage.KindStorageV2),
		Location: to.Ptr(region),
		SKU:      &armstorage.SKU{Name: to.Ptr(armstorage.SKUName(sku))},
		Tags:     tagsFor(bucket),
		Properties: &armstorage.AccountPropertiesCreateParameters{
			AccessTier:             to.Ptr(armstorage.AccessTierHot),
			AllowBlobPublicAccess:  to.Ptr(false),
			AllowSharedKeyAccess:   to.Ptr(true),
			EnableHTTPSTrafficOnly: to.Ptr(true),
			MinimumTLSVersion:      to.Ptr(armstorage.MinimumTLSVersionTLS12),
		},
	}, nil)
	if err == nil {
		_, err = poller.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: 2 * time.Second})
	}
	if err != nil {
		return armstorage.Account{}, fmt.Errorf("creating storage account %q: %w", name, classify(err))
	}
	return s.ownAccount(ctx, bucket)
}

// reachAccount returns the blob endpoint of bucket's account, reached with key1 (fetched once
// per request, and only from an account that is ours): the data plane's reach.
func (s *armStore) reachAccount(ctx context.Context, bucket string) (blobAccount, error) {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return blobAccount{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.reachedAccounts[bucket]; ok {
		return a, nil
	}
	acct, err := s.ownAccount(ctx, bucket)
	if err != nil {
		return blobAccount{}, err
	}
	a, err := s.accountAccess(ctx, bucket, acct, accountKeys[0], nil)
	if err != nil {
		return blobAccount{}, err
	}
	client, err := s.newBlobs(a)
	if err != nil {
		return blobAccount{}, err
	}
	reached := blobAccount{client: client, name: a.name}
	s.reachedAccounts[bucket] = reached
	return reached, nil
}

// accountAccess returns how to reach bucket's account (which the caller checked is ours) with
// one of its keys: the key's value from keys if given (a regeneration's answer), else listed.
func (s *armStore) accountAccess(ctx context.Context, bucket string, acct armstorage.Account, keyName string, keys []*armstorage.AccountKey) (account, error) {
	rg, name := ResourceGroupName(bucket), deref(acct.Name)
	if keys == nil {
		res, err := s.accounts.ListKeys(ctx, rg, name, nil)
		if err != nil {
			return account{}, fmt.Errorf("listing the keys of storage account %q: %w", name, classify(err))
		}
		keys = res.Keys
	}
	i := slices.IndexFunc(keys, func(k *armstorage.AccountKey) bool { return strings.EqualFold(deref(k.KeyName), keyName) })
	if i < 0 || deref(keys[i].Value) == "" {
		return account{}, fmt.Errorf("storage account %q has no %s", name, keyName)
	}
	var endpoint string
	if acct.Properties != nil && acct.Properties.PrimaryEndpoints != nil {
		endpoint = deref(acct.Properties.PrimaryEndpoints.Blob)
	}
	a, err := accountAt(endpoint)
	if err != nil {
		return account{}, fmt.Errorf("storage account %q: %w", name, err)
	}
	a.key = deref(keys[i].Value)
	return a, nil
}

// accountAt reads the account name and domain from an account's primary blob endpoint:
// https://<account>.<domain>/, or http://<loopback host:port>/<account>/ for an emulator.
func accountAt(endpoint string) (account, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return account{}, fmt.Errorf("unusable primary blob endpoint %q", endpoint)
	}
	if u.Scheme == "http" {
		host := u.Hostname()
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return account{}, fmt.Errorf("primary blob endpoint %q is plain http off loopback", endpoint)
		}
		return account{name: strings.Trim(u.Path, "/"), domain: u.Host, emulator: true}, nil
	}
	name, domain, ok := strings.Cut(u.Host, ".")
	if u.Scheme != "https" || !ok || domain == "" {
		return account{}, fmt.Errorf("unusable primary blob endpoint %q", endpoint)
	}
	return account{name: name, domain: domain}, nil
}
