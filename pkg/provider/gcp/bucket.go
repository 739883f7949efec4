// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// EnsureBucket implements objectstore.Management: it creates the bucket in the project of the
// credentials and converges this extension's part of its settings on every call (see converge).
func (s *management) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	_, err := s.reconcile(ctx, b, true)
	return err
}

// PlanBucket implements objectstore.BucketPlanner: EnsureBucket's reads and diffs without its
// writes.
func (s *management) PlanBucket(ctx context.Context, b objectstore.Bucket) ([]objectstore.BucketChange, error) {
	return s.reconcile(ctx, b, false)
}

// reconcile is EnsureBucket (apply) or PlanBucket: observe, desire, diff and, with apply, write.
func (s *management) reconcile(ctx context.Context, b objectstore.Bucket, apply bool) ([]objectstore.BucketChange, error) {
	if err := gcpapi.ValidateBucketName(b.Name); err != nil {
		return nil, err
	}
	cfg := s.cfg
	if err := validateLocation(b.Region); err != nil {
		return nil, err
	}
	owned, err := s.inProject(ctx, b.Name)
	if err != nil {
		return nil, err
	}
	if !owned {
		if !apply {
			return []objectstore.BucketChange{{Setting: "bucket", Action: objectstore.ChangeCreate, Detail: "in " + b.Region + ", with every setting as declared"}}, nil
		}
		if err := s.create(ctx, b, cfg); err != nil {
			return nil, err
		}
	}
	attrs, err := s.client.Bucket(b.Name).Attrs(ctx)
	if err != nil {
		return nil, classify(err)
	}
	if attrs.Labels[gcpapi.ManagedLabel] != gcpapi.ManagedLabelValue {
		if cfg.HandBack && handedBackForm(attrs) {
			// A finished hand-back (or a bucket never ours): nothing of this extension's is on
			// the bucket, and it writes nothing there.
			return nil, nil
		}
		if why := notIncumbents(attrs); why != "" {
			return nil, fmt.Errorf("%w: bucket %q in project %q is neither this extension's (no label %s=%s) nor the one gardener-extension-provider-gcp made for this BackupBucket (%s); it is left untouched: choose another BackupBucket name, or label the bucket %s=%s if it is to be managed by this extension",
				objectstore.ErrOwnedByOther, b.Name, s.projectID, gcpapi.ManagedLabel, gcpapi.ManagedLabelValue, why, gcpapi.ManagedLabel, gcpapi.ManagedLabelValue)
		}
		// provider-gcp's bucket: adopted, and marked so until a hand-back (which adopts nothing).
		if !cfg.HandBack {
			cfg = adopting(cfg)
		}
	}
	if !strings.EqualFold(attrs.Location, b.Region) {
		return nil, objectstore.Invalidf("bucket %q exists in location %q, not in spec.region %q: a bucket's location cannot be changed; set spec.region to %q or use another BackupBucket name", b.Name, attrs.Location, b.Region, strings.ToLower(attrs.Location))
	}
	changes, err := s.converge(ctx, b.Name, attrs, cfg, b.HandBackComplete, apply)
	var wait *objectstore.HandBackWaitError
	if errors.As(err, &wait) {
		err = nil // said after the rest converged, instead of the read-back
	}
	if err != nil {
		return nil, err
	}
	if cfg.GeneratedCredentials != nil {
		c, err := s.grantReader(ctx, b.Name, apply)
		if err != nil {
			return nil, err
		}
		changes = append(changes, c...)
	}
	if wait != nil {
		return changes, wait
	}
	if cfg.HandBack && apply {
		return changes, s.verifyHandBack(ctx, b.Name, releasesLabels(cfg, b.HandBackComplete))
	}
	return changes, nil
}

// verifyHandBack reads the bucket back: of this extension's rules, only provider-gcp's
// (markedRule) may be left, which its reconcile then leaves as it is (see desiredLifecycle); with
// released (releasesLabels), none of this extension's labels either.
func (s *management) verifyHandBack(ctx context.Context, bucket string, released bool) error {
	attrs, err := s.client.Bucket(bucket).Attrs(ctx)
	if err != nil {
		return classify(err)
	}
	if ours := ownRules(attrs); !reflect.DeepEqual(ours, []storage.LifecycleRule{markedRule()}) {
		return fmt.Errorf("%w: providerConfig.handBack: bucket %q reads back with %s of this extension's, not provider-gcp's %s alone; retried", objectstore.ErrThrottled, bucket, describeRules(ours), describeRules([]storage.LifecycleRule{markedRule()}))
	}
	if left := labelsOfOurs(attrs.Labels); released && len(left) > 0 {
		return fmt.Errorf("%w: providerConfig.handBack: bucket %q reads back with this extension's labels %s; retried", objectstore.ErrThrottled, bucket, strings.Join(left, ", "))
	}
	return nil
}

// ownRules are the bucket's lifecycle rules that are this extension's (ownRule).
func ownRules(attrs *storage.BucketAttrs) []storage.LifecycleRule {
	var ours []storage.LifecycleRule
	for _, r := range attrs.Lifecycle.Rules {
		if ownRule(r, attrs.Labels) {
			ours = append(ours, r)
		}
	}
	return ours
}

// handedBackForm says whether a bucket without this extension's ManagedLabel is one a hand-back
// finished with: uniform bucket-level access on, and of this extension's rules provider-gcp's
// (markedRule) alone; other rules are somebody else's. With handBack nothing is written to such
// a bucket: nothing of this extension's is left there to hand back (notIncumbents would refuse it
// for an operator's rule, and it is not adopted again).
func handedBackForm(attrs *storage.BucketAttrs) bool {
	if _, ok := attrs.Labels[gcpapi.ManagedLabel]; ok {
		return false // somebody else's value
	}
	return attrs.UniformBucketLevelAccess.Enabled && reflect.DeepEqual(ownRules(attrs), []storage.LifecycleRule{markedRule()})
}

// releasesLabels says whether a hand-back with cfg that does not wait for the store removes this
// extension's labels: only in the BackupBucket controller's pass that completes the hand-back
// (complete, objectstore.Bucket.HandBackComplete), and never while the configuration still
// declares generatedCredentials or entryCredentials (condition HandBack WaitingForSettings). In
// every other pass they stay, so that unsetting handBack meanwhile finds the bucket still this
// extension's (not refused by notIncumbents, nor adopted again).
func releasesLabels(cfg *gcpapi.BackupBucketConfig, complete bool) bool {
	return cfg.HandBack && complete && cfg.GeneratedCredentials == nil && cfg.EntryCredentials == nil
}

// ourLabelValues are this extension's labels and the values it writes. A hand-back that
// completes removes each where it holds one of them; the same key with another value is
// somebody else's and stays.
var ourLabelValues = map[string][]string{
	gcpapi.ManagedLabel:   {gcpapi.ManagedLabelValue},
	gcpapi.AdoptedLabel:   {AdoptedFromProviderGCP},
	gcpapi.AbortRuleLabel: {abortRuleAdded, abortRuleNone},
}

// labelsOfOurs are the labels among labels that are this extension's (ourLabelValues), sorted, as
// key=value.
func labelsOfOurs(labels map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(ourLabelValues)) {
		if v, ok := labels[k]; ok && slices.Contains(ourLabelValues[k], v) {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// grantReader binds the bucket's generated service account, where an earlier version bound it
// with BucketRole alone, with ReaderRole too (only with apply; without, it returns the change):
// entries read the bucket's deferral rule back with it. An account not bound on the bucket (none
// issued yet) is left to the issuer.
func (s *management) grantReader(ctx context.Context, bucket string, apply bool) ([]objectstore.BucketChange, error) {
	email := ServiceAccountID(bucket) + "@" + s.projectID + ".iam.gserviceaccount.com"
	policy, err := s.client.Bucket(bucket).IAM().Policy(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the IAM policy of bucket %q to grant its generated service account %s: %w", bucket, ReaderRole, classify(err))
	}
	member := "serviceAccount:" + email
	if !policy.HasRole(member, BucketRole) || policy.HasRole(member, ReaderRole) {
		return nil, nil
	}
	change := []objectstore.BucketChange{{Setting: "IAM binding " + ReaderRole, Action: objectstore.ChangeCreate, Detail: "for " + member}}
	if !apply {
		return change, nil
	}
	return change, setBucketBinding(ctx, s.client, bucket, email, true)
}

// inProject reports whether a bucket of that name exists in the credentials' project. Bucket
// names are global: the listing, not the name, tells ours from another project's.
func (s *management) inProject(ctx context.Context, name string) (bool, error) {
	it := s.client.Buckets(ctx, s.projectID)
	it.Prefix = name
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return false, nil
		}
		if err != nil {
			return false, classify(err)
		}
		if a.Name == name {
			return true, nil
		}
	}
}

func (s *management) create(ctx context.Context, b objectstore.Bucket, cfg *gcpapi.BackupBucketConfig) error {
	attrs := &storage.BucketAttrs{
		Location:                 strings.ToUpper(b.Region),
		UniformBucketLevelAccess: storage.UniformBucketLevelAccess{Enabled: true},
		PublicAccessPrevention:   storage.PublicAccessPreventionEnforced,
		Lifecycle:                storage.Lifecycle{Rules: []storage.LifecycleRule{abortUploadsRule, markedRule()}},
		Labels:                   withAbortRuleLabel(desiredLabels(cfg)),
		SoftDeletePolicy:         &storage.SoftDeletePolicy{RetentionDuration: softDeleteDuration(cfg)},
	}
	if im := cfg.Immutability; im != nil {
		attrs.RetentionPolicy = &storage.RetentionPolicy{RetentionPeriod: im.RetentionPeriod.Duration}
	}
	err := s.client.Bucket(b.Name).Create(ctx, s.projectID, attrs)
	if statusOf(err) == http.StatusConflict {
		// Either another project holds the name, or a concurrent create of ours won.
		if owned, lerr := s.inProject(ctx, b.Name); lerr == nil && owned {
			return nil
		}
		return fmt.Errorf("%w: the bucket name %q is taken by another project; choose another BackupBucket name or free the name: %w", objectstore.ErrOwnedByOther, b.Name, err)
	}
	return classify(err)
}

func desiredLabels(cfg *gcpapi.BackupBucketConfig) map[string]string {
	labels := maps.Clone(cfg.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[gcpapi.ManagedLabel] = gcpapi.ManagedLabelValue
	return labels
}

// withAbortRuleLabel is labels with gcpapi.AbortRuleLabel saying that abortUploadsRule is ours
// (a bucket this extension creates).
func withAbortRuleLabel(labels map[string]string) map[string]string {
	labels[gcpapi.AbortRuleLabel] = abortRuleAdded
	return labels
}

func softDeleteDuration(cfg *gcpapi.BackupBucketConfig) time.Duration {
	if cfg.SoftDelete == nil {
		return 0
	}
	return cfg.SoftDelete.RetentionDuration.Duration
}

// converge diffs every managed setting with the declaration and, with apply, updates what
// differs in one request guarded by the bucket's metageneration, and locks the retention policy
// when asked. Labels and lifecycle rules of others are kept (only this extension's labels are
// set; see desiredLifecycle). It returns the changes (made, with apply).
func (s *management) converge(ctx context.Context, name string, attrs *storage.BucketAttrs, cfg *gcpapi.BackupBucketConfig, complete, apply bool) (_ []objectstore.BucketChange, retErr error) {
	var upd storage.BucketAttrsToUpdate
	var changes []objectstore.BucketChange
	if !attrs.UniformBucketLevelAccess.Enabled {
		upd.UniformBucketLevelAccess = &storage.UniformBucketLevelAccess{Enabled: true}
		changes = append(changes, objectstore.BucketChange{Setting: "uniform bucket-level access", Action: objectstore.ChangeUpdate, Detail: "off -> on"})
	}
	if attrs.PublicAccessPrevention != storage.PublicAccessPreventionEnforced {
		upd.PublicAccessPrevention = storage.PublicAccessPreventionEnforced
		// Both settings live in iamConfiguration: sent together, so that a store replacing the
		// object as a whole (the stand-in does) keeps uniform access on.
		upd.UniformBucketLevelAccess = &storage.UniformBucketLevelAccess{Enabled: true}
		changes = append(changes, objectstore.BucketChange{Setting: "public access prevention", Action: objectstore.ChangeUpdate, Detail: "-> enforced"})
	}
	want, abortLabel, marks, wait, err := s.desiredLifecycle(ctx, name, attrs.Lifecycle.Rules, attrs.Labels, cfg.HandBack, apply)
	if err != nil {
		return nil, err
	}
	changes = append(changes, marks...)
	if !reflect.DeepEqual(attrs.Lifecycle.Rules, want.Rules) {
		upd.Lifecycle = &want
		changes = append(changes, lifecycleDiff(attrs.Lifecycle.Rules, want.Rules)...)
	}
	// A hand-back that does not wait takes this extension's labels with it (releasesLabels); one
	// that waits keeps them (the rules it keeps are still this extension's). In the same request
	// as the lifecycle: the label never says another rule than the bucket has.
	handedBack := releasesLabels(cfg, complete) && wait == nil
	wantLabels := desiredLabels(cfg)
	if handedBack {
		delete(wantLabels, gcpapi.ManagedLabel)
		for _, kv := range labelsOfOurs(attrs.Labels) {
			k, v, _ := strings.Cut(kv, "=")
			upd.DeleteLabel(k)
			changes = append(changes, objectstore.BucketChange{Setting: "label " + k, Action: objectstore.ChangeDelete, Detail: v + " ->"})
		}
	} else if cur, ok := attrs.Labels[gcpapi.AbortRuleLabel]; cur != abortLabel {
		upd.SetLabel(gcpapi.AbortRuleLabel, abortLabel)
		action := objectstore.ChangeCreate
		if ok {
			action = objectstore.ChangeUpdate
		}
		changes = append(changes, objectstore.BucketChange{Setting: "label " + gcpapi.AbortRuleLabel, Action: action, Detail: "-> " + abortLabel})
	}
	have := time.Duration(0)
	if attrs.SoftDeletePolicy != nil {
		have = attrs.SoftDeletePolicy.RetentionDuration
	}
	if want := softDeleteDuration(cfg); have != want {
		upd.SoftDeletePolicy = &storage.SoftDeletePolicy{RetentionDuration: want}
		changes = append(changes, objectstore.BucketChange{Setting: "soft delete retention", Action: objectstore.ChangeUpdate, Detail: fmt.Sprintf("%s -> %s", have, want)})
	}
	for _, k := range slices.Sorted(maps.Keys(wantLabels)) {
		v := wantLabels[k]
		if cur, ok := attrs.Labels[k]; !ok || cur != v {
			upd.SetLabel(k, v)
			action := objectstore.ChangeCreate
			if ok {
				action = objectstore.ChangeUpdate
			}
			changes = append(changes, objectstore.BucketChange{Setting: "label " + k, Action: action, Detail: "-> " + v})
		}
	}
	policy, lock, kept, err := retentionChange(name, attrs.RetentionPolicy, cfg.Immutability)
	if err != nil {
		return nil, err
	}
	if policy != nil {
		upd.RetentionPolicy = policy
		was := "none"
		if attrs.RetentionPolicy != nil && attrs.RetentionPolicy.RetentionPeriod > 0 {
			was = attrs.RetentionPolicy.RetentionPeriod.String()
		}
		changes = append(changes, objectstore.BucketChange{Setting: "retention policy", Action: objectstore.ChangeUpdate, Detail: was + " -> " + policy.RetentionPeriod.String()})
	}
	updates := len(changes) // in one update request (marks are made before: only by desiredLifecycle with apply)
	if kept != "" {
		changes = append(changes, objectstore.BucketChange{Setting: "retention policy", Action: objectstore.ChangeKeep, Detail: kept})
	}
	if lock {
		changes = append(changes, objectstore.BucketChange{Setting: "retention policy lock", Action: objectstore.ChangeCreate, Detail: "locked for good"})
	}
	if !apply {
		return changes, nil
	}
	// A hand-back that waits (wait) converges every setting all the same and says so last.
	defer func() {
		if retErr == nil {
			retErr = wait
		}
	}()
	metageneration := attrs.MetaGeneration
	if updates > 0 {
		// The precondition makes a concurrent change (for example somebody locking the policy
		// meanwhile) fail this update instead of being overwritten; the next reconcile re-reads.
		updated, err := s.client.Bucket(name).If(storage.BucketConditions{MetagenerationMatch: metageneration}).Update(ctx, upd)
		if err != nil {
			if statusOf(err) == http.StatusPreconditionFailed {
				return nil, fmt.Errorf("bucket %q changed while its settings were converged; retried on the next reconcile: %w", name, err)
			}
			return nil, fmt.Errorf("converging the settings of bucket %q: %w", name, classify(err))
		}
		metageneration = updated.MetaGeneration
	}
	if lock {
		if err := s.client.Bucket(name).If(storage.BucketConditions{MetagenerationMatch: metageneration}).LockRetentionPolicy(ctx); err != nil {
			return nil, fmt.Errorf("locking the retention policy of bucket %q: %w", name, classify(err))
		}
	}
	return changes, nil
}

// retentionChange decides how the bucket's retention policy moves towards the declaration,
// keeping the stricter setting: the policy to write (nil: none), whether to lock it afterwards,
// and kept, which says why a policy longer than declared (or not declared) is kept as it is
// ("" none kept). A retention is never shortened or removed, whoever set it; a locked one can
// never be unlocked or shortened anyway, and a declaration that asks for that is a configuration
// error, reported without touching the bucket. A lock declared over a longer unlocked period
// locks that longer period.
func retentionChange(bucket string, have *storage.RetentionPolicy, want *gcpapi.ImmutableConfig) (policy *storage.RetentionPolicy, lock bool, kept string, err error) {
	var havePeriod time.Duration
	locked := false
	if have != nil {
		havePeriod, locked = have.RetentionPeriod, have.IsLocked
	}
	if want == nil {
		switch {
		case locked:
			return nil, false, "", objectstore.Invalidf("bucket %q has a locked retention policy of %s, which can never be removed; declare providerConfig.immutability with locked: true and a retentionPeriod of at least %s", bucket, havePeriod, havePeriod)
		case havePeriod > 0:
			return nil, false, fmt.Sprintf("%s, unlocked, kept (none declared): a retention is never removed; remove it on the bucket if it is to go", havePeriod), nil
		}
		return nil, false, "", nil
	}
	wantPeriod := want.RetentionPeriod.Duration
	if locked {
		switch {
		case !want.Locked:
			return nil, false, "", objectstore.Invalidf("bucket %q has a locked retention policy, which can never be unlocked; set providerConfig.immutability.locked to true", bucket)
		case wantPeriod < havePeriod:
			return nil, false, "", objectstore.Invalidf("bucket %q has a locked retention policy of %s, which can never be shortened; providerConfig.immutability.retentionPeriod %s must be at least that", bucket, havePeriod, wantPeriod)
		case wantPeriod > havePeriod:
			return &storage.RetentionPolicy{RetentionPeriod: wantPeriod}, false, "", nil
		}
		return nil, false, "", nil
	}
	switch {
	case havePeriod > wantPeriod:
		kept = fmt.Sprintf("%s, kept (declared: %s): a longer retention is never shortened", havePeriod, wantPeriod)
	case havePeriod < wantPeriod:
		policy = &storage.RetentionPolicy{RetentionPeriod: wantPeriod}
	}
	return policy, want.Locked, kept, nil
}

func validateLocation(region string) error {
	if region == "" {
		return objectstore.Invalidf("no region: set spec.region to the bucket's GCS location (for example europe-west1)")
	}
	for _, r := range region {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' {
			return objectstore.Invalidf("spec.region %q is not a GCS location: only letters, digits and dashes (for example europe-west1, eur4, eu), not %q", region, r)
		}
	}
	if region[0] == '-' || region[len(region)-1] == '-' {
		return objectstore.Invalidf("spec.region %q is not a GCS location: it must not begin or end with a dash", region)
	}
	return nil
}

// DeleteBucket implements objectstore.Management.
func (s *management) DeleteBucket(ctx context.Context, name string) error {
	if err := gcpapi.ValidateBucketName(name); err != nil {
		return err
	}
	err := s.client.Bucket(name).Delete(ctx)
	switch {
	case err == nil, errors.Is(err, storage.ErrBucketNotExist), statusOf(err) == http.StatusNotFound:
		return nil
	case statusOf(err) == http.StatusConflict, statusOf(err) == http.StatusPreconditionFailed:
		// GCS answers 409 for a bucket that still holds objects (emulators 412).
		return fmt.Errorf("%w: %w", objectstore.ErrBucketNotEmpty, err)
	}
	return classify(err)
}
