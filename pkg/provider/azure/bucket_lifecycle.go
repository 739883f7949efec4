// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Lifecycle management: every blob version and snapshot of an entry that an immutability policy
// holds when the entry is deleted gets this blob index tag, and one rule of the account's
// management policy deletes base blobs, previous versions and snapshots that carry it, once the
// policy lets it (lifecycle runs daily and retries what is still protected). The rule acts on
// nothing that is not tagged so: its only scope is the tag.
const (
	DeferredDeletionRule = "gardener-backup-deferred-deletion"
	DeferredDeletionTag  = "gardener-backup-delete"
)

// deferredDeletionRule is the rule as the extension writes it.
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
				Version:  &armstorage.ManagementPolicyVersion{Delete: &armstorage.DateAfterCreation{DaysAfterCreationGreaterThan: to.Ptr[float32](0)}},
				Snapshot: &armstorage.ManagementPolicySnapShot{Delete: &armstorage.DateAfterCreation{DaysAfterCreationGreaterThan: to.Ptr[float32](0)}},
			},
		},
	}
}

// ruleMismatch says how a rule differs from what deferred deletion needs (enabled, scoped by the
// tag alone, never wider, deleting base blobs, versions and snapshots as soon as allowed), or ""
// when it matches.
func ruleMismatch(r *armstorage.ManagementPolicyRule) string {
	switch {
	case r == nil:
		return "it is missing"
	case r.Enabled != nil && !*r.Enabled:
		return "it is disabled"
	case r.Type != nil && *r.Type != armstorage.RuleTypeLifecycle:
		return fmt.Sprintf("its type is %q", *r.Type)
	case r.Definition == nil || r.Definition.Filters == nil || r.Definition.Actions == nil:
		return "it has no filters or no actions"
	}
	f, a := r.Definition.Filters, r.Definition.Actions
	if len(f.BlobIndexMatch) != 1 || deref(f.BlobIndexMatch[0].Name) != DeferredDeletionTag || deref(f.BlobIndexMatch[0].Op) != "==" || deref(f.BlobIndexMatch[0].Value) != "true" {
		return fmt.Sprintf("its blob index filter is not exactly %s==true", DeferredDeletionTag)
	}
	if len(f.PrefixMatch) > 0 {
		return "it has a prefix filter"
	}
	if !slices.ContainsFunc(f.BlobTypes, func(t *string) bool { return strings.EqualFold(deref(t), "blockBlob") }) {
		return "it does not act on block blobs"
	}
	if a.BaseBlob == nil || a.BaseBlob.Delete == nil || deref(a.BaseBlob.Delete.DaysAfterModificationGreaterThan) != 0 {
		return "it does not delete base blobs as soon as allowed"
	}
	if a.Version == nil || a.Version.Delete == nil || deref(a.Version.Delete.DaysAfterCreationGreaterThan) != 0 {
		return "it does not delete previous versions as soon as allowed"
	}
	if a.Snapshot == nil || a.Snapshot.Delete == nil || deref(a.Snapshot.Delete.DaysAfterCreationGreaterThan) != 0 {
		return "it does not delete snapshots as soon as allowed"
	}
	return ""
}

// readRule returns the account's management policy rules and the index of ours (-1: none).
func (s *armStore) readRule(ctx context.Context, rg, account string) ([]*armstorage.ManagementPolicyRule, int, error) {
	got, err := s.policies.Get(ctx, rg, account, armstorage.ManagementPolicyNameDefault, nil)
	if err != nil && !isNotFound(err) {
		return nil, -1, fmt.Errorf("reading the lifecycle management policy of storage account %q: %w", account, classify(err))
	}
	var rules []*armstorage.ManagementPolicyRule
	if err == nil && got.Properties != nil && got.Properties.Policy != nil {
		rules = got.Properties.Policy.Rules
	}
	return rules, slices.IndexFunc(rules, func(r *armstorage.ManagementPolicyRule) bool { return deref(r.Name) == DeferredDeletionRule }), nil
}

// ensureDeferredDeletionRule writes the rule when it is missing or differs; the rules of others
// in the same management policy are kept.
func (s *armStore) ensureDeferredDeletionRule(ctx context.Context, rg, account string, log *changeLog) error {
	rules, i, err := s.readRule(ctx, rg, account)
	if err != nil {
		return err
	}
	want := deferredDeletionRule()
	change := objectstore.BucketChange{Setting: "lifecycle management policy rule " + DeferredDeletionRule, Action: objectstore.ChangeCreate}
	switch {
	case i >= 0 && ruleMismatch(rules[i]) == "":
		return nil
	case i >= 0:
		change.Action, change.Detail = objectstore.ChangeUpdate, ruleMismatch(rules[i])
		rules = slices.Clone(rules)
		rules[i] = want
	default:
		rules = append(slices.Clone(rules), want)
	}
	return log.add(change, func() error { return s.putRules(ctx, rg, account, rules) })
}

// putRules writes the account's management policy with rules.
func (s *armStore) putRules(ctx context.Context, rg, account string, rules []*armstorage.ManagementPolicyRule) error {
	_, err := s.policies.CreateOrUpdate(ctx, rg, account, armstorage.ManagementPolicyNameDefault, armstorage.ManagementPolicy{
		Properties: &armstorage.ManagementPolicyProperties{Policy: &armstorage.ManagementPolicySchema{Rules: rules}},
	}, nil)
	if err != nil {
		return fmt.Errorf("setting the lifecycle rule %q of storage account %q: %w", DeferredDeletionRule, account, classify(err))
	}
	return nil
}
