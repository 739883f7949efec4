// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Taking over from gardener-extension-provider-azure (v1.62.1, the incumbent): its BackupBucket
// controller names the storage account "bkp" + the first 15 hex digits of SHA-256(bucket name)
// (pkg/controller/backupbucket/backupbucket.go:29-32) in the resource group named after the
// bucket (backupbucket.go:42, 50-52), and tags neither. Its entries mark locked blobs with the
// blob index tag "blob-marked-for-deletion=true" (pkg/azure/client/storage.go:142-147), which
// the management policy "default" deletes with its one rule "delete-backupentry"
// (pkg/azure/client/managementpolicies.go:30-65, written as the only rule by
// pkg/controller/backupbucket/actuator.go:90).
const (
	// TagAdoptedFrom marks an account this extension adopted from the incumbent (besides the two
	// tags of ours, which make it ours from then on).
	TagAdoptedFrom = "gardener-backup-adopted-from"
	// AdoptedFromIncumbent is TagAdoptedFrom's value.
	AdoptedFromIncumbent = "provider-azure"
	// IncumbentRule and IncumbentTag are the incumbent's deferral rule and marker.
	IncumbentRule = "delete-backupentry"
	IncumbentTag  = "blob-marked-for-deletion"
)

// IncumbentAccountName is the incumbent's storage account name for bucket.
func IncumbentAccountName(bucket string) string {
	sum := sha256.Sum256([]byte(bucket))
	return "bkp" + hex.EncodeToString(sum[:])[:15]
}

// accountState says whose bucket's account is.
type accountState int

const (
	accountMissing    accountState = iota
	accountOurs                    // tagged ours for the bucket (created or adopted)
	accountIncumbents              // the incumbent's, untagged, in the bucket's resource group
	accountForeign                 // somebody else's: never touched
)

// findAccount reads bucket's storage account: this extension's name first, then the incumbent's,
// both in the bucket's resource group (an account of either name elsewhere is not found there,
// and so never taken). It returns the account (its Name set), and whose it is.
func (s *armStore) findAccount(ctx context.Context, bucket string) (armstorage.Account, accountState, error) {
	rg := ResourceGroupName(bucket)
	for _, name := range []string{AccountName(bucket), IncumbentAccountName(bucket)} {
		got, err := s.accounts.GetProperties(ctx, rg, name, nil)
		switch {
		case isNotFound(err):
			continue
		case err != nil:
			return armstorage.Account{}, accountMissing, fmt.Errorf("reading storage account %q: %w", name, classify(err))
		}
		acct := got.Account
		acct.Name = to.Ptr(name)
		switch {
		case ours(acct.Tags, bucket):
			return acct, accountOurs, nil
		case name == IncumbentAccountName(bucket) && len(acct.Tags) == 0:
			return acct, accountIncumbents, nil
		}
		return acct, accountForeign, nil
	}
	return armstorage.Account{}, accountMissing, nil
}

// notAdopted is the error for an act on the incumbent's account before the bucket's reconcile
// adopted it.
func notAdopted(rg, name, bucket string) error {
	return fmt.Errorf("%w: storage account %q in resource group %q is gardener-extension-provider-azure's for bucket %q and not adopted yet: the BackupBucket's reconcile adopts it (reconcile the BackupBucket)",
		objectstore.ErrOwnedByOther, name, rg, bucket)
}

// adopt tags the incumbent's account as ours, adopted: its keys, containers and blobs are not
// touched (no key is regenerated, nothing re-created or moved).
func (s *armStore) adopt(ctx context.Context, rg string, acct armstorage.Account, bucket string) (armstorage.Account, error) {
	tags := adoptionTags(bucket)
	name := deref(acct.Name)
	if _, err := s.accounts.Update(ctx, rg, name, armstorage.AccountUpdateParameters{Tags: tags}, nil); err != nil {
		return acct, fmt.Errorf("adopting storage account %q of gardener-extension-provider-azure: %w", name, classify(err))
	}
	acct.Tags = tags
	return acct, nil
}

// adoptionTags are the tags of an account adopted from the incumbent for bucket.
func adoptionTags(bucket string) map[string]*string {
	tags := tagsFor(bucket)
	tags[TagAdoptedFrom] = to.Ptr(AdoptedFromIncumbent)
	return tags
}

// adopted says whether an account of ours was adopted from the incumbent.
func adopted(acct armstorage.Account) bool {
	return deref(acct.Tags[TagAdoptedFrom]) == AdoptedFromIncumbent
}

// incumbentRule is the incumbent's rule exactly as it writes it
// (pkg/azure/client/managementpolicies.go:34-61 at v1.62.1, daysAfterCreation 0 from
// pkg/controller/backupbucket/actuator.go:90).
func incumbentRule() *armstorage.ManagementPolicyRule {
	return &armstorage.ManagementPolicyRule{
		Name: to.Ptr(IncumbentRule),
		Type: to.Ptr(armstorage.RuleTypeLifecycle),
		Definition: &armstorage.ManagementPolicyDefinition{
			Actions: &armstorage.ManagementPolicyAction{
				BaseBlob: &armstorage.ManagementPolicyBaseBlob{Delete: &armstorage.DateAfterModification{DaysAfterCreationGreaterThan: to.Ptr[float32](0)}},
			},
			Filters: &armstorage.ManagementPolicyFilter{
				BlobTypes:      []*string{to.Ptr("blockBlob")},
				PrefixMatch:    []*string{to.Ptr("")},
				BlobIndexMatch: []*armstorage.TagFilter{{Name: to.Ptr(IncumbentTag), Op: to.Ptr("=="), Value: to.Ptr("true")}},
			},
		},
		Enabled: to.Ptr(true),
	}
}

// incumbentRuleMismatch says how r differs from the incumbent's rule ("" when it is that rule:
// enabled, base blobs deleted as soon as allowed, scoped by its marker; an empty prefix match is
// no scope).
func incumbentRuleMismatch(r *armstorage.ManagementPolicyRule) string {
	switch {
	case r == nil:
		return "it is missing"
	case r.Enabled != nil && !*r.Enabled:
		return "it is disabled"
	case r.Definition == nil || r.Definition.Filters == nil || r.Definition.Actions == nil:
		return "it has no filters or no actions"
	}
	f, a := r.Definition.Filters, r.Definition.Actions
	if len(f.BlobIndexMatch) != 1 || deref(f.BlobIndexMatch[0].Name) != IncumbentTag || deref(f.BlobIndexMatch[0].Op) != "==" || deref(f.BlobIndexMatch[0].Value) != "true" {
		return fmt.Sprintf("its blob index filter is not exactly %s==true", IncumbentTag)
	}
	if slices.ContainsFunc(f.PrefixMatch, func(p *string) bool { return deref(p) != "" }) {
		return "it has a prefix filter"
	}
	if !slices.ContainsFunc(f.BlobTypes, func(t *string) bool { return strings.EqualFold(deref(t), "blockBlob") }) {
		return "it does not act on block blobs"
	}
	if a.BaseBlob == nil || a.BaseBlob.Delete == nil || (deref(a.BaseBlob.Delete.DaysAfterCreationGreaterThan) != 0 && deref(a.BaseBlob.Delete.DaysAfterModificationGreaterThan) != 0) ||
		(a.BaseBlob.Delete.DaysAfterCreationGreaterThan == nil && a.BaseBlob.Delete.DaysAfterModificationGreaterThan == nil) {
		return "it does not delete base blobs as soon as allowed"
	}
	return ""
}

// keepIncumbentRule puts the incumbent's rule beside ours in an adopted account's policy where
// no rule of that name deletes what the incumbent marked, so that the blobs it deferred are still
// deleted when their locks end; rules of others are kept.
func (s *armStore) keepIncumbentRule(ctx context.Context, rg, account string, log *changeLog) error {
	got, err := s.policies.Get(ctx, rg, account, armstorage.ManagementPolicyNameDefault, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("reading the lifecycle management policy of storage account %q: %w", account, classify(err))
	}
	var rules []*armstorage.ManagementPolicyRule
	if err == nil && got.Properties != nil && got.Properties.Policy != nil {
		rules = got.Properties.Policy.Rules
	}
	i := slices.IndexFunc(rules, func(r *armstorage.ManagementPolicyRule) bool { return deref(r.Name) == IncumbentRule })
	switch {
	case i >= 0 && incumbentRuleMismatch(rules[i]) == "":
		return nil
	case i >= 0:
		rules = slices.Clone(rules)
		rules[i] = incumbentRule()
	default:
		rules = append(slices.Clone(rules), incumbentRule())
	}
	return log.add(objectstore.BucketChange{Setting: "lifecycle management policy rule " + IncumbentRule, Action: objectstore.ChangeUpdate, Detail: "kept while the adopted account is ours"}, func() error {
		return s.putPolicy(ctx, rg, account, rules, IncumbentRule)
	})
}

// putPolicy writes the account's management policy with rules, what names the change.
func (s *armStore) putPolicy(ctx context.Context, rg, account string, rules []*armstorage.ManagementPolicyRule, what string) error {
	_, err := s.policies.CreateOrUpdate(ctx, rg, account, armstorage.ManagementPolicyNameDefault, armstorage.ManagementPolicy{
		Properties: &armstorage.ManagementPolicyProperties{Policy: &armstorage.ManagementPolicySchema{Rules: rules}},
	}, nil)
	if err != nil {
		return fmt.Errorf("setting the lifecycle rule %q of storage account %q: %w", what, account, classify(err))
	}
	return nil
}

// handBack leaves an adopted account's management policy in the incumbent's form: its one rule
// in place of this extension's, every rule of others kept (pkg/controller/backupbucket/actuator.go:90
// of the incumbent replaces the whole policy with its rule when it next writes it; that is its
// doing), reads it back, and removes the deferral record: after it, no key-only entry of this
// extension relies on a rule that the incumbent drops. Blobs this extension deferred carry the
// incumbent's marker too (markForDeferral), so the incumbent's rule deletes their base blobs.
func (s *armStore) handBack(ctx context.Context, bucket, rg string, acct armstorage.Account, log *changeLog) error {
	name := deref(acct.Name)
	if !adopted(acct) {
		return &objectstore.HandBackWaitError{Bucket: bucket, ByOperator: true, Why: fmt.Sprintf("storage account %q was created by this extension, not adopted from gardener-extension-provider-azure, which would look for account %q and create it empty; remove handBack, or move the backups first", name, IncumbentAccountName(bucket))}
	}
	rules, err := s.policyRules(ctx, rg, name)
	if err != nil {
		return err
	}
	if want := handBackRules(rules); !handedBackRules(rules) {
		err := log.add(objectstore.BucketChange{Setting: "lifecycle management policy rules " + DeferredDeletionRule + ", " + IncumbentRule, Action: objectstore.ChangeUpdate, Detail: "the incumbent's in place of ours; the rules of others kept"}, func() error {
			return s.putPolicy(ctx, rg, name, want, IncumbentRule)
		})
		if err != nil || !log.apply {
			return err
		}
		if rules, err = s.policyRules(ctx, rg, name); err != nil {
			return fmt.Errorf("reading back the lifecycle management policy of storage account %q: %w", name, err)
		}
		if !handedBackRules(rules) {
			return fmt.Errorf("%w: the management policy of storage account %q does not read back in gardener-extension-provider-azure's form (its rule %q, none of this extension's)", objectstore.ErrUnsupported, name, IncumbentRule)
		}
	}
	if !log.apply {
		return nil
	}
	return s.blobs.removeRecord(ctx, bucket)
}

// policyRules reads the rules of the account's management policy (none when it has none).
func (s *armStore) policyRules(ctx context.Context, rg, account string) ([]*armstorage.ManagementPolicyRule, error) {
	got, err := s.policies.Get(ctx, rg, account, armstorage.ManagementPolicyNameDefault, nil)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the lifecycle management policy of storage account %q: %w", account, classify(err))
	}
	if got.Properties == nil || got.Properties.Policy == nil {
		return nil, nil
	}
	return got.Properties.Policy.Rules, nil
}

// handBackRules are rules with this extension's rule and the incumbent's removed, the
// incumbent's appended as it writes it: the rules of others are kept.
func handBackRules(rules []*armstorage.ManagementPolicyRule) []*armstorage.ManagementPolicyRule {
	out := slices.DeleteFunc(slices.Clone(rules), func(r *armstorage.ManagementPolicyRule) bool {
		return deref(r.Name) == DeferredDeletionRule || deref(r.Name) == IncumbentRule
	})
	return append(out, incumbentRule())
}

// handedBackRules reports whether rules hold the incumbent's rule as it writes it and none of
// this extension's.
func handedBackRules(rules []*armstorage.ManagementPolicyRule) bool {
	incumbents := 0
	for _, r := range rules {
		switch deref(r.Name) {
		case DeferredDeletionRule:
			return false
		case IncumbentRule:
			if incumbentRuleMismatch(r) != "" {
				return false
			}
			incumbents++
		}
	}
	return incumbents == 1
}

// incumbentsKey names the key the incumbent publishes in its generated secret: the most recently
// created, by name where the times are equal or missing (SortKeysByAge, used at
// pkg/controller/backupbucket/actuator.go:152; backupbucket.go:86-106 at v1.62.1).
func (s *armStore) incumbentsKey(ctx context.Context, bucket, account string) (string, error) {
	res, err := s.accounts.ListKeys(ctx, ResourceGroupName(bucket), account, nil)
	if err != nil {
		return "", fmt.Errorf("listing the keys of storage account %q: %w", account, classify(err))
	}
	keys := slices.Clone(res.Keys)
	slices.SortStableFunc(keys, func(a, b *armstorage.AccountKey) int { return strings.Compare(deref(a.KeyName), deref(b.KeyName)) })
	slices.SortStableFunc(keys, func(a, b *armstorage.AccountKey) int {
		switch {
		case a.CreationTime == nil:
			return 1
		case b.CreationTime == nil:
			return -1
		}
		return b.CreationTime.Compare(*a.CreationTime)
	})
	if len(keys) == 0 {
		return "", fmt.Errorf("storage account %q has no keys", account)
	}
	return strings.ToLower(deref(keys[0].KeyName)), nil
}
