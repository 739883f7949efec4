package azure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Tags the extension puts on what it creates. Only a resource group or storage account tagged
// with the bucket's name is ever deleted; an account not tagged so is somebody else's.
const (
	TagBucket    = "gardener-backup-bucket"
	TagManagedBy = "managed-by"
	managedBy    = "gardener-extension-backup"
)

// Lifecycle management: blobs held by an immutability policy when their entry is deleted are
// given this blob index tag, and one rule of the account's management policy deletes them once
// the policy lets it (lifecycle runs daily and retries what is still protected).
const (
	DeferredDeletionRule = "gardener-backup-deferred-deletion"
	DeferredDeletionTag  = "gardener-backup-delete"
)

// Account keys: an account has exactly two. The generated secret publishes one; rotating
// regenerates the other and publishes it, so that the published key stays valid meanwhile.
var accountKeys = []string{"key1", "key2"}

// AccountName is the storage account of a bucket: "bkp" and 21 hex digits of the name's SHA-256
// (account names are global, 3-24 lowercase letters and digits).
func AccountName(bucket string) string {
	sum := sha256.Sum256([]byte(bucket))
	return "bkp" + hex.EncodeToString(sum[:])[:21]
}

// ResourceGroupName is the resource group of a bucket: its name, as gardener-extension-provider-azure
// names it.
func ResourceGroupName(bucket string) string { return bucket }

// armStore is a bucket reached through the Azure Resource Manager with a service principal or a
// workload identity: it creates and converges the resource group, the storage account and the
// container, and reaches the blobs with the account's key, fetched per request.
type armStore struct {
	accounts   *armstorage.AccountsClient
	containers *armstorage.BlobContainersClient
	services   *armstorage.BlobServicesClient
	policies   *armstorage.ManagementPoliciesClient
	groups     *armresources.ResourceGroupsClient
	resources  *armresources.Client
	region     string
	// newData builds the data-plane store from an account's name, key and endpoint.
	newData func(account) (*store, error)

	mu   sync.Mutex
	data map[string]*store // by bucket, for this request only
}

var (
	_ objectstore.Store            = (*armStore)(nil)
	_ objectstore.CredentialIssuer = (*armStore)(nil)
)

func newARMStore(sub string, cred azcore.TokenCredential, opts *arm.ClientOptions, region string, newData func(account) (*store, error)) (*armStore, error) {
	factory, err := armstorage.NewClientFactory(sub, cred, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", objectstore.ErrInvalidConfig, err)
	}
	resources, err := armresources.NewClientFactory(sub, cred, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", objectstore.ErrInvalidConfig, err)
	}
	return &armStore{
		accounts:   factory.NewAccountsClient(),
		containers: factory.NewBlobContainersClient(),
		services:   factory.NewBlobServicesClient(),
		policies:   factory.NewManagementPoliciesClient(),
		groups:     resources.NewResourceGroupsClient(),
		resources:  resources.NewClient(),
		region:     region,
		newData:    newData,
		data:       map[string]*store{},
	}, nil
}

// MaxDeleteBatch implements objectstore.Store.
func (s *armStore) MaxDeleteBatch() int { return maxDeleteBatch }

func ours(tags map[string]*string, bucket string) bool {
	return tags != nil && tags[TagBucket] != nil && *tags[TagBucket] == bucket
}

func tagsFor(bucket string) map[string]*string {
	return map[string]*string{TagBucket: to.Ptr(bucket), TagManagedBy: to.Ptr(managedBy)}
}

// sameLocation compares Azure locations, which come back lowercase without spaces
// ("West Europe" is "westeurope").
func sameLocation(a, b string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "")) }
	return norm(a) == norm(b)
}

// EnsureBucket implements objectstore.Store: resource group, storage account (StorageV2, HTTPS
// only, TLS 1.2, no public blob access, the declared redundancy), private container, its
// immutability policy and the deferred-deletion lifecycle rule, each converged.
func (s *armStore) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	cfg, _ := b.Config.(*azureapi.BackupBucketConfig)
	rg, name := ResourceGroupName(b.Name), AccountName(b.Name)
	region := b.Region
	if region == "" {
		region = s.region
	}
	if err := s.ensureGroup(ctx, rg, b.Name, region); err != nil {
		return err
	}
	if err := s.ensureAccount(ctx, rg, name, b.Name, region, cfg.SKU()); err != nil {
		return err
	}
	if err := s.ensureContainer(ctx, rg, name, b.Name); err != nil {
		return err
	}
	if err := s.ensureImmutability(ctx, rg, name, b.Name, cfg); err != nil {
		return err
	}
	if err := s.ensureSoftDelete(ctx, rg, name, cfg); err != nil {
		return err
	}
	return s.ensureDeferredDeletionRule(ctx, rg, name)
}

func (s *armStore) ensureGroup(ctx context.Context, rg, bucket, region string) error {
	_, err := s.groups.Get(ctx, rg, nil)
	if err == nil {
		return nil // an existing group is used as it is; it is deleted only if tagged ours
	}
	if !isNotFound(err) {
		return fmt.Errorf("reading resource group %q: %w", rg, classify(err))
	}
	if _, err := s.groups.CreateOrUpdate(ctx, rg, armresources.ResourceGroup{Location: to.Ptr(region), Tags: tagsFor(bucket)}, nil); err != nil {
		return fmt.Errorf("creating resource group %q: %w", rg, classify(err))
	}
	return nil
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
	if p.MinimumTLSVersion == nil || *p.MinimumTLSVersion != armstorage.MinimumTLSVersionTLS12 {
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

func (s *armStore) ensureAccount(ctx context.Context, rg, name, bucket, region, sku string) error {
	got, err := s.accounts.GetProperties(ctx, rg, name, nil)
	switch {
	case err == nil:
		a := got.Account
		if !ours(a.Tags, bucket) {
			return fmt.Errorf("%w: storage account %q in resource group %q is not tagged %s=%s: it is not this bucket's", objectstore.ErrOwnedByOther, name, rg, TagBucket, bucket)
		}
		if a.Location != nil && !sameLocation(*a.Location, region) {
			return fmt.Errorf("%w: storage account %q is in %q, the bucket's region is %q", objectstore.ErrInvalidConfig, name, *a.Location, region)
		}
		if up := accountDrift(a, sku); up != nil {
			if _, err := s.accounts.Update(ctx, rg, name, *up, nil); err != nil {
				return fmt.Errorf("converging storage account %q: %w", name, classify(err))
			}
		}
		return nil
	case !isNotFound(err):
		return fmt.Errorf("reading storage account %q: %w", name, classify(err))
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
		return fmt.Errorf("creating storage account %q: %w", name, classify(err))
	}
	return nil
}

func (s *armStore) ensureContainer(ctx context.Context, rg, account, name string) error {
	got, err := s.containers.Get(ctx, rg, account, name, nil)
	switch {
	case err == nil:
		if p := got.ContainerProperties; p != nil && p.PublicAccess != nil && *p.PublicAccess != armstorage.PublicAccessNone {
			_, err := s.containers.Update(ctx, rg, account, name, armstorage.BlobContainer{ContainerProperties: &armstorage.ContainerProperties{PublicAccess: to.Ptr(armstorage.PublicAccessNone)}}, nil)
			if err != nil {
				return fmt.Errorf("making container %q private: %w", name, classify(err))
			}
		}
		return nil
	case !isNotFound(err):
		return fmt.Errorf("reading container %q: %w", name, classify(err))
	}
	_, err = s.containers.Create(ctx, rg, account, name, armstorage.BlobContainer{ContainerProperties: &armstorage.ContainerProperties{PublicAccess: to.Ptr(armstorage.PublicAccessNone)}}, nil)
	if err != nil {
		return fmt.Errorf("creating container %q: %w", name, classify(err))
	}
	return nil
}

// ensureImmutability converges the container's time-based immutability policy. A locked policy
// can only be extended: a declaration that would shorten, unlock or remove it is refused and
// nothing is changed.
func (s *armStore) ensureImmutability(ctx context.Context, rg, account, container string, cfg *azureapi.BackupBucketConfig) error {
	var want *azureapi.ImmutableConfig
	if cfg != nil {
		want = cfg.Immutability
	}
	got, err := s.containers.GetImmutabilityPolicy(ctx, rg, account, container, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("reading the immutability policy of container %q: %w", container, classify(err))
	}
	var days int32
	locked := false
	etag := ""
	if err == nil && got.Properties != nil && got.Properties.ImmutabilityPeriodSinceCreationInDays != nil {
		days = *got.Properties.ImmutabilityPeriodSinceCreationInDays
		locked = got.Properties.State != nil && *got.Properties.State == armstorage.ImmutabilityPolicyStateLocked
		etag = deref(got.Etag)
	}
	field := "providerConfig.immutability"
	if want == nil {
		switch {
		case days == 0:
			return nil
		case locked:
			return fmt.Errorf("%w: %s is not declared, but container %q has a locked immutability policy of %d days, which can never be removed: declare it", objectstore.ErrInvalidConfig, field, container, days)
		}
		if _, err := s.containers.DeleteImmutabilityPolicy(ctx, rg, account, container, etag, nil); err != nil {
			return fmt.Errorf("removing the immutability policy of container %q: %w", container, classify(err))
		}
		return nil
	}
	wantDays := int32(want.RetentionPeriod.Duration / (24 * time.Hour))
	if locked {
		switch {
		case !want.Locked:
			return fmt.Errorf("%w: %s.locked is false, but the policy of container %q is locked and cannot be unlocked", objectstore.ErrInvalidConfig, field, container)
		case wantDays < days:
			return fmt.Errorf("%w: %s.retentionPeriod is %d days, but the locked policy of container %q keeps blobs %d days and can only be extended", objectstore.ErrInvalidConfig, field, wantDays, container, days)
		case wantDays > days:
			_, err := s.containers.ExtendImmutabilityPolicy(ctx, rg, account, container, etag, &armstorage.BlobContainersClientExtendImmutabilityPolicyOptions{
				Parameters: &armstorage.ImmutabilityPolicy{Properties: &armstorage.ImmutabilityPolicyProperty{ImmutabilityPeriodSinceCreationInDays: to.Ptr(wantDays)}},
			})
			if err != nil {
				return fmt.Errorf("extending the immutability policy of container %q: %w", container, classify(err))
			}
		}
		return nil
	}
	if days != wantDays {
		opts := &armstorage.BlobContainersClientCreateOrUpdateImmutabilityPolicyOptions{
			Parameters: &armstorage.ImmutabilityPolicy{Properties: &armstorage.ImmutabilityPolicyProperty{ImmutabilityPeriodSinceCreationInDays: to.Ptr(wantDays)}},
		}
		if etag != "" {
			opts.IfMatch = to.Ptr(etag)
		}
		res, err := s.containers.CreateOrUpdateImmutabilityPolicy(ctx, rg, account, container, opts)
		if err != nil {
			return fmt.Errorf("setting the immutability policy of container %q: %w", container, classify(err))
		}
		etag = deref(res.Etag)
	}
	if want.Locked {
		if _, err := s.containers.LockImmutabilityPolicy(ctx, rg, account, container, etag, nil); err != nil {
			return fmt.Errorf("locking the immutability policy of container %q: %w", container, classify(err))
		}
	}
	return nil
}

// ensureSoftDelete converges the account's blob and container soft delete when declared.
func (s *armStore) ensureSoftDelete(ctx context.Context, rg, account string, cfg *azureapi.BackupBucketConfig) error {
	if cfg == nil || cfg.SoftDelete == nil {
		return nil
	}
	policy := func(days int32) *armstorage.DeleteRetentionPolicy {
		if days == 0 {
			return &armstorage.DeleteRetentionPolicy{Enabled: to.Ptr(false)}
		}
		return &armstorage.DeleteRetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(days)}
	}
	same := func(got *armstorage.DeleteRetentionPolicy, days int32) bool {
		if got == nil || !deref(got.Enabled) {
			return days == 0
		}
		return deref(got.Days) == days
	}
	got, err := s.services.GetServiceProperties(ctx, rg, account, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("reading the blob service properties of account %q: %w", account, classify(err))
	}
	var props armstorage.BlobServicePropertiesProperties
	if err == nil && got.BlobServiceProperties.BlobServiceProperties != nil {
		props = *got.BlobServiceProperties.BlobServiceProperties
	}
	sd := cfg.SoftDelete
	if same(props.DeleteRetentionPolicy, sd.BlobRetentionDays) && same(props.ContainerDeleteRetentionPolicy, sd.ContainerRetentionDays) {
		return nil
	}
	_, err = s.services.SetServiceProperties(ctx, rg, account, armstorage.BlobServiceProperties{BlobServiceProperties: &armstorage.BlobServicePropertiesProperties{
		DeleteRetentionPolicy:          policy(sd.BlobRetentionDays),
		ContainerDeleteRetentionPolicy: policy(sd.ContainerRetentionDays),
	}}, nil)
	if err != nil {
		return fmt.Errorf("setting soft delete of account %q: %w", account, classify(err))
	}
	return nil
}

// deferredDeletionRule deletes the blobs tagged for deferred deletion; the rules of others in the
// same management policy are kept.
func deferredDeletionRule() *armstorage.ManagementPolicyRule {
	return &armstorage.ManagementPolicyRule{
		Name:    to.Ptr(DeferredDeletionRule),
		Enabled: to.Ptr(true),
		Type:    to.Ptr(armstorage.RuleTypeLifecycle),
		Definition: &armstorage.ManagementPolicyDefinition{
			Filters: &armstorage.ManagementPolicyFilter{
				BlobTypes:      []*string{to.Ptr("blockBlob")},
				BlobIndexMatch: []*armstorage.TagFilter{{Name: to.Ptr(DeferredDeletionTag), Op: to.Ptr("=="), Value: to.Ptr("true")}},
			},
			Actions: &armstorage.ManagementPolicyAction{
				BaseBlob: &armstorage.ManagementPolicyBaseBlob{Delete: &armstorage.DateAfterModification{DaysAfterModificationGreaterThan: to.Ptr[float32](0)}},
			},
		},
	}
}

func sameRule(a, b *armstorage.ManagementPolicyRule) bool {
	f := func(r *armstorage.ManagementPolicyRule) string {
		if r == nil || r.Definition == nil || r.Definition.Filters == nil || r.Definition.Actions == nil || r.Definition.Actions.BaseBlob == nil || r.Definition.Actions.BaseBlob.Delete == nil {
			return ""
		}
		d, fl := r.Definition, r.Definition.Filters
		var tags []string
		for _, t := range fl.BlobIndexMatch {
			tags = append(tags, deref(t.Name)+deref(t.Op)+deref(t.Value))
		}
		var types []string
		for _, t := range fl.BlobTypes {
			types = append(types, deref(t))
		}
		return fmt.Sprint(deref(r.Enabled), types, tags, len(fl.PrefixMatch), deref(d.Actions.BaseBlob.Delete.DaysAfterModificationGreaterThan))
	}
	return f(a) != "" && f(a) == f(b)
}

func (s *armStore) ensureDeferredDeletionRule(ctx context.Context, rg, account string) error {
	got, err := s.policies.Get(ctx, rg, account, armstorage.ManagementPolicyNameDefault, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("reading the lifecycle management policy of account %q: %w", account, classify(err))
	}
	var rules []*armstorage.ManagementPolicyRule
	if err == nil && got.Properties != nil && got.Properties.Policy != nil {
		rules = got.Properties.Policy.Rules
	}
	want := deferredDeletionRule()
	i := slices.IndexFunc(rules, func(r *armstorage.ManagementPolicyRule) bool { return deref(r.Name) == DeferredDeletionRule })
	switch {
	case i >= 0 && sameRule(rules[i], want):
		return nil
	case i >= 0:
		rules = slices.Clone(rules)
		rules[i] = want
	default:
		rules = append(slices.Clone(rules), want)
	}
	_, err = s.policies.CreateOrUpdate(ctx, rg, account, armstorage.ManagementPolicyNameDefault, armstorage.ManagementPolicy{
		Properties: &armstorage.ManagementPolicyProperties{Policy: &armstorage.ManagementPolicySchema{Rules: rules}},
	}, nil)
	if err != nil {
		return fmt.Errorf("setting the lifecycle rule %q of account %q: %w", DeferredDeletionRule, account, classify(err))
	}
	return nil
}

// DeleteBucket implements objectstore.Store: an empty bucket's storage account and then its
// resource group, each only if this extension created it (tagged with the bucket's name) and the
// group only when nothing else is left in it. An account that is not the bucket's is not touched.
func (s *armStore) DeleteBucket(ctx context.Context, bucket string) error {
	rg, name := ResourceGroupName(bucket), AccountName(bucket)
	got, err := s.accounts.GetProperties(ctx, rg, name, nil)
	switch {
	case err == nil && !ours(got.Tags, bucket):
		return nil // not this bucket's account: nothing of ours to delete
	case err == nil:
		empty, err := s.isEmpty(ctx, bucket)
		if err != nil {
			return err
		}
		if !empty {
			return fmt.Errorf("container %q: %w", bucket, objectstore.ErrBucketNotEmpty)
		}
		if _, err := s.accounts.Delete(ctx, rg, name, nil); err != nil && !isNotFound(err) {
			return fmt.Errorf("deleting storage account %q: %w", name, classify(err))
		}
	case !isNotFound(err):
		return fmt.Errorf("reading storage account %q: %w", name, classify(err))
	}
	group, err := s.groups.Get(ctx, rg, nil)
	switch {
	case isNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading resource group %q: %w", rg, classify(err))
	case !ours(group.Tags, bucket):
		return nil
	}
	pager := s.resources.NewListByResourceGroupPager(rg, &armresources.ClientListByResourceGroupOptions{Top: to.Ptr[int32](1)})
	if pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing resource group %q: %w", rg, classify(err))
		}
		if len(page.Value) > 0 {
			return nil // something else lives in the group: it stays
		}
	}
	poller, err := s.groups.BeginDelete(ctx, rg, nil)
	if err == nil {
		_, err = poller.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: 2 * time.Second})
	}
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting resource group %q: %w", rg, classify(err))
	}
	return nil
}

// isEmpty reports whether the bucket's container holds no blob version at all.
func (s *armStore) isEmpty(ctx context.Context, bucket string) (bool, error) {
	errStop := errors.New("stop")
	err := s.ListObjects(ctx, bucket, "", func(page []objectstore.ObjectVersion) error {
		if len(page) > 0 {
			return errStop
		}
		return nil
	})
	switch {
	case errors.Is(err, errStop):
		return false, nil
	case err == nil, errors.Is(err, objectstore.ErrBucketNotFound):
		return true, nil
	}
	return false, err
}

// dataPlane returns the blob store of bucket's account, reached with key1 (fetched once per
// request).
func (s *armStore) dataPlane(ctx context.Context, bucket string) (*store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.data[bucket]; ok {
		return d, nil
	}
	a, err := s.accountAccess(ctx, bucket, accountKeys[0], nil)
	if err != nil {
		return nil, err
	}
	d, err := s.newData(a)
	if err != nil {
		return nil, err
	}
	s.data[bucket] = d
	return d, nil
}

// accountAccess returns how to reach bucket's account with one of its keys: the key's value from
// keys if given (a regeneration's answer), else listed.
func (s *armStore) accountAccess(ctx context.Context, bucket, keyName string, keys []*armstorage.AccountKey) (account, error) {
	rg, name := ResourceGroupName(bucket), AccountName(bucket)
	got, err := s.accounts.GetProperties(ctx, rg, name, nil)
	if err != nil {
		if isNotFound(err) {
			return account{}, fmt.Errorf("storage account %q: %w", name, objectstore.ErrBucketNotFound)
		}
		return account{}, fmt.Errorf("reading storage account %q: %w", name, classify(err))
	}
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
	if got.Properties != nil && got.Properties.PrimaryEndpoints != nil {
		endpoint = deref(got.Properties.PrimaryEndpoints.Blob)
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

// secretData is what etcd-backup-restore needs to reach the account, and the marker of the
// deferred-deletion rule for the entry controller.
func (a account) secretData() map[string][]byte {
	d := map[string][]byte{KeyStorageAccount: []byte(a.name), KeyStorageKey: []byte(a.key), KeyDomain: []byte(a.domain), KeyLifecycleDeferral: []byte("true")}
	if a.emulator {
		d[KeyEmulatorEnabled] = []byte("true")
	}
	return d
}

// IssueCredential implements objectstore.CredentialIssuer. The first credential is key1 as the
// account was created with it (nobody else has been given it); a rotation regenerates the key not
// in use and returns it, which also invalidates a value issued before but never recorded.
func (s *armStore) IssueCredential(ctx context.Context, bucket string, inUse []string) (objectstore.Credential, error) {
	if len(inUse) == 0 {
		a, err := s.accountAccess(ctx, bucket, accountKeys[0], nil)
		if err != nil {
			return objectstore.Credential{}, err
		}
		return objectstore.Credential{ID: accountKeys[0], Data: a.secretData()}, nil
	}
	i := slices.IndexFunc(accountKeys, func(k string) bool { return !slices.Contains(inUse, k) })
	if i < 0 {
		return objectstore.Credential{}, fmt.Errorf("%w: both account keys are in use (the previous one is still within its grace period): a rotation has to wait until it is revoked", objectstore.ErrInvalidConfig)
	}
	keyName := accountKeys[i]
	res, err := s.accounts.RegenerateKey(ctx, ResourceGroupName(bucket), AccountName(bucket), armstorage.AccountRegenerateKeyParameters{KeyName: to.Ptr(keyName)}, nil)
	if err != nil {
		return objectstore.Credential{}, fmt.Errorf("regenerating %s of storage account %q: %w", keyName, AccountName(bucket), classify(err))
	}
	a, err := s.accountAccess(ctx, bucket, keyName, res.Keys)
	if err != nil {
		return objectstore.Credential{}, err
	}
	return objectstore.Credential{ID: keyName, Data: a.secretData()}, nil
}

// RevokeCredentials implements objectstore.CredentialIssuer: every key not kept is regenerated
// (and its new value never handed out).
func (s *armStore) RevokeCredentials(ctx context.Context, bucket string, keep []string) error {
	for _, k := range accountKeys {
		if slices.Contains(keep, k) {
			continue
		}
		_, err := s.accounts.RegenerateKey(ctx, ResourceGroupName(bucket), AccountName(bucket), armstorage.AccountRegenerateKeyParameters{KeyName: to.Ptr(k)}, nil)
		switch {
		case isNotFound(err):
			return nil // the account is gone, and its keys with it
		case err != nil:
			return fmt.Errorf("revoking %s of storage account %q: %w", k, AccountName(bucket), classify(err))
		}
	}
	return nil
}

// The blob operations go to the account's data plane.

// ListObjects implements objectstore.Store.
func (s *armStore) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	d, err := s.dataPlane(ctx, bucket)
	if err != nil {
		return err
	}
	return d.ListObjects(ctx, bucket, prefix, fn)
}

// DeleteObjects implements objectstore.Store.
func (s *armStore) DeleteObjects(ctx context.Context, bucket string, objs []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	d, err := s.dataPlane(ctx, bucket)
	if err != nil {
		return nil, err
	}
	return d.DeleteObjects(ctx, bucket, objs)
}

// DeferDeletion implements objectstore.Store.
func (s *armStore) DeferDeletion(ctx context.Context, bucket, prefix string) (objectstore.Deferral, error) {
	d, err := s.dataPlane(ctx, bucket)
	if err != nil {
		return objectstore.Deferral{}, err
	}
	return d.DeferDeletion(ctx, bucket, prefix)
}

// PutObject implements objectstore.Store.
func (s *armStore) PutObject(ctx context.Context, bucket, key string, data []byte) error {
	d, err := s.dataPlane(ctx, bucket)
	if err != nil {
		return err
	}
	return d.PutObject(ctx, bucket, key, data)
}

// GetObject implements objectstore.Store.
func (s *armStore) GetObject(ctx context.Context, bucket, key string) ([]byte, error) {
	d, err := s.dataPlane(ctx, bucket)
	if err != nil {
		return nil, err
	}
	return d.GetObject(ctx, bucket, key)
}

// isNotFound is true for a management-plane 404 of any resource.
func isNotFound(err error) bool {
	c := classify(err)
	return errors.Is(c, objectstore.ErrNotFound) || errors.Is(c, objectstore.ErrBucketNotFound)
}
