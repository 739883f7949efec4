// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	securityv1alpha1constants "github.com/gardener/gardener/pkg/apis/security/v1alpha1/constants"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// entryRecord names one credential of the entry (entryrecord.Credential): the etcd-backup
// secret's record (entryrecord.Record, in one annotation) holds IDs, issuers and places, never
// values. gardener's generic actuator resets the secret's annotations on every write, so the
// pass writes the record again after it (Settle) (a credential whose record a restart lost
// in between is recognised by the entry's intent, or its ID in the data).
type entryRecord = entryrecord.Credential

// Outcome is what one pass decided about the entry's credential: what the etcd-backup
// secret holds and why, and what is to be done once it is written. The BackupEntry controller
// hands a fresh one to each pass (Data fills it, Settle finishes it); nothing of it outlives the
// pass.
type Outcome struct {
	// decided is set once Data has decided (gardener's generic actuator may return before it
	// asks for the data).
	decided bool
	// published is the entry's own credential the secret now holds; nil: the bucket's.
	published *entryRecord
	// issued: published was issued by this pass.
	issued bool
	// reach says what the published credential reaches (the condition's message).
	reach string
	// revoke are credentials of the entry to revoke once the secret no longer holds them.
	revoke []entryRecord
	// err is why the entry's own credential could not be issued (the pass fails with it).
	err error
	// rotation is set when published replaced the previous credential by a rotation.
	rotation *entryRotation
	// retire is the rotated-out credential to retire once the secret no longer holds it.
	retire *pendingRetirement
	// schedule says when published was issued and is rotated next (rotationSchedule).
	schedule string
	// issuer issued published (nil: none published); prefix is the entry's. The pass ends with
	// it the entry's retired credentials whose time has come (EndRetiredEntryCredentials).
	issuer objectstore.EntryCredentialIssuer
	prefix objectstore.Prefix
	// atQuota: the store's quota refused the entry's own credential and
	// allowBucketCredentialAtQuota published the bucket's instead (reach says why).
	atQuota bool
}

// accessOf is the access an entry's credential has: read-only for a source- entry (restoring a
// migrated shoot from the source seed's backups), read-write otherwise.
func accessOf(be *extensionsv1alpha1.BackupEntry) objectstore.EntryAccess {
	if strings.HasPrefix(be.Name, v1beta1constants.BackupSourcePrefix+"-") {
		return objectstore.EntryReadOnly
	}
	return objectstore.EntryReadWrite
}

// etcdBackupSecretKey is the secret gardener's generic actuator writes for the entry.
func etcdBackupSecretKey(be *extensionsv1alpha1.BackupEntry) client.ObjectKey {
	return entryinfo.EtcdBackupSecretKey(be)
}

// ReadEtcdBackupSecret reads the entry's etcd-backup secret (nil if there is none).
func (c *Credentials) ReadEtcdBackupSecret(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := c.reader.Get(ctx, etcdBackupSecretKey(be), s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the entry's etcd-backup secret: %w", err)
	}
	return s, nil
}

// EntrySettings returns the entry's per-entry credential settings (nil: off) and its config. A
// configuration that cannot be read -- the seed's awaited (*provider.SeedConfigPendingError), or
// the entry's providerConfig (gardenlet's copy of its bucket's) not decoding -- is an error,
// never "off": off would publish the bucket's credential and revoke the entry's own, and a
// deletion would skip the configured issuer's revocation.
func (c *Credentials) EntrySettings(be *extensionsv1alpha1.BackupEntry) (*credentials.EntrySettings, provider.Config, error) {
	cfg, err := connect.EntryConfig(c.provider, be)
	if err != nil {
		return nil, cfg, fmt.Errorf("reading the entry's credential settings (entryCredentials): %w", err)
	}
	if p, ok := cfg.ProviderConfig.(credentials.EntryPolicy); ok {
		return p.EntryCredentialSettings(), cfg, nil
	}
	return nil, cfg, nil
}

// operatorSecret is the secret whose credentials issue and revoke the entry's: the
// BackupBucket's (the operator's) when the bucket is on this seed, else the entry's own (a
// source- entry of a migration, whose bucket lives on the source seed).
func (c *Credentials) operatorSecret(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (corev1.SecretReference, error) {
	bb := &extensionsv1alpha1.BackupBucket{}
	if err := c.reader.Get(ctx, client.ObjectKey{Name: be.Spec.BucketName}, bb); err != nil {
		if apierrors.IsNotFound(err) {
			return be.Spec.SecretRef, nil
		}
		return corev1.SecretReference{}, fmt.Errorf("reading BackupBucket %q for the operator's credentials: %w", be.Spec.BucketName, err)
	}
	return bb.Spec.SecretRef, nil
}

// refused carries out the decision (DecideRefusal) of a pass whose issuance
// failed with issueErr: the bucket's credential instead, or the pass fails with nothing changing
// hands. noSecret: the entry has no etcd-backup secret yet.
func (c *Credentials) refused(ctx context.Context, be *extensionsv1alpha1.BackupEntry, o *Outcome, obs Observed, plan Plan,
	bucketData map[string][]byte, noSecret bool, issueErr error) (map[string][]byte, error) {
	refusal := RefusedOther
	switch {
	case errors.Is(issueErr, objectstore.ErrQuotaExceeded):
		refusal = RefusedQuota
	case errors.Is(issueErr, objectstore.ErrForbidden) || errors.Is(issueErr, objectstore.ErrUnauthenticated):
		refusal = RefusedForbidden
	}
	fallback := DecideRefusal(obs, plan, refusal, nil)
	if fallback == FallbackAskBucket {
		onSeed := true
		err := c.reader.Get(ctx, client.ObjectKey{Name: be.Spec.BucketName}, &extensionsv1alpha1.BackupBucket{})
		switch {
		case apierrors.IsNotFound(err):
			onSeed = false
		case err != nil:
			return nil, fmt.Errorf("reading BackupBucket %q for the operator's credentials: %w", be.Spec.BucketName, err)
		}
		fallback = DecideRefusal(obs, plan, refusal, &onSeed)
	}
	switch fallback {
	case FallbackSourceOfAnotherSeed:
		o.revoke, o.retire = plan.Instead.Revoke, plan.Instead.Retire
		o.reach = bucketWide(be, fmt.Sprintf("this source- entry's bucket lives on the source seed, and the credentials this seed holds of it (the entry's secret, the bucket's generated credential) cannot issue one: %v", issueErr))
		return bucketData, nil
	case FallbackAtQuota:
		o.revoke, o.retire = plan.Instead.Revoke, plan.Instead.Retire
		return bucketCredentialAtQuota(be, o, bucketData, issueErr), nil
	}
	o.revoke, o.retire, o.rotation = nil, nil, nil // nothing is written: nothing changes hands
	o.err = fmt.Errorf("issuing the entry's own credential (entryCredentials, issuer %s): %w", obs.Settings.Issuer, issueErr)
	switch {
	case refusal == RefusedQuota && noSecret:
		o.err = fmt.Errorf("%w; the entry has no etcd-backup secret until one can be issued", o.err)
	case refusal == RefusedQuota:
		o.err = fmt.Errorf("%w; the entry keeps the credential its etcd-backup secret holds until one can be issued", o.err)
	}
	return nil, o.err
}

// entryIssuer builds the entry issuer named name from the operator's credentials (nil: the
// provider issues none).
func (c *Credentials) entryIssuer(ctx context.Context, be *extensionsv1alpha1.BackupEntry, cfg provider.Config, name string) (objectstore.EntryCredentialIssuer, error) {
	ref, err := c.operatorSecret(ctx, be)
	if err != nil {
		return nil, err
	}
	return connect.NewEntryIssuer(ctx, c.reader, ref, be.Spec.Region, cfg, name)
}

// bucketWide is the message of an entry that holds its bucket's credential.
func bucketWide(be *extensionsv1alpha1.BackupEntry, why string) string {
	return fmt.Sprintf("the etcd-backup secret holds the credential of bucket %q, which reaches every entry's objects in it: %s", be.Spec.BucketName, why)
}

// providerCannotIssue is why an entry of a provider without an entry issuer holds its bucket's
// credential; the page it names gives each provider's reason (its store's access control, or
// what etcd-backup-restore accepts).
func providerCannotIssue(providerType string) string {
	return fmt.Sprintf("provider %s cannot issue credentials that reach one prefix (docs/entry-credentials.md, section %q)", providerType, providerType)
}

// BucketWideBecause says why the entry keeps its bucket's credential before any issuer is asked
// ("": the entry gets its own, as settings say).
func (c *Credentials) BucketWideBecause(ctx context.Context, be *extensionsv1alpha1.BackupEntry, settings *credentials.EntrySettings, cfg provider.Config) (string, error) {
	switch {
	case settings == nil && !cfg.IssuesEntryCredentials():
		return providerCannotIssue(c.provider.Type()), nil
	case settings == nil:
		return "entryCredentials is not set in the seed configuration", nil
	case entryinfo.IsGardenEntry(be):
		return "a garden's entry keeps its bucket's credential (its snapshots are not under an entry's prefix)", nil
	}
	wi, err := c.entrySecretIsWorkloadIdentity(ctx, be)
	if err != nil || !wi {
		return "", err
	}
	return "the entry's secret is a workload identity, which gardener's actuator keeps the etcd-backup secret as; per-entry credentials are static keys", nil
}

// entryCredentialData decides what the entry's etcd-backup secret holds: the bucket's
// credential (bucketData, as EtcdBackupSecretData made it from entryData) or the entry's own,
// issued here (publishing it is the generic actuator's write). It observes, decides
// (Decide) and executes the steps before the write; it fills the pass's outcome.
func (c *Credentials) entryCredentialData(ctx context.Context, be *extensionsv1alpha1.BackupEntry, o *Outcome, entryData, bucketData map[string][]byte) (map[string][]byte, error) {
	o.decided = true
	settings, cfg, err := c.EntrySettings(be)
	if err != nil {
		// The secret is not written: the entry keeps what it holds until the settings read.
		o.err = err
		return nil, err
	}
	current, err := c.ReadEtcdBackupSecret(ctx, be)
	if err != nil {
		return nil, err
	}
	obs := Observed{Access: accessOf(be), Settings: settings, SecretExists: current != nil,
		Intent: intentOf(be), RotationRequest: be.Annotations[AnnotationRotateCredentials], Now: time.Now()}
	var currentData map[string][]byte
	if current != nil {
		currentData = current.Data
		// Another entry's records (one of the same shoot namespace) are not this entry's to
		// reuse, revoke or retire: that entry's next issuance revokes what it no longer holds.
		if obs.Record, obs.Ours, err = entryrecord.Read(be.Name, current.Annotations); err != nil {
			// The secret is not written: its record is all that names what it holds.
			o.err = err
			return nil, err
		}
	}
	if obs.BucketWide, err = c.BucketWideBecause(ctx, be, settings, cfg); err != nil {
		return nil, err
	}
	var issuer objectstore.EntryCredentialIssuer
	if obs.BucketWide == "" {
		if issuer, err = c.entryIssuer(ctx, be, cfg, settings.Issuer); err != nil {
			o.err = err
			return nil, err
		}
		if issuer == nil {
			obs.BucketWide = providerCannotIssue(c.provider.Type())
		}
	}
	prefix, err := objectstore.EntryPrefix(be.Name)
	if obs.BucketWide == "" && err != nil {
		o.err = err
		return nil, err
	}
	if issuer != nil {
		if obs.Location, err = issuer.Location(objectstore.WithOperation(ctx, objectstore.OpCredentialLocation)); err != nil {
			o.err = fmt.Errorf("finding where the entry's credentials live: %w", err)
			return nil, o.err
		}
		obs.HeldID, obs.BucketID = issuer.CredentialID(currentData), issuer.CredentialID(bucketData)
	}
	plan := Decide(obs)
	if plan.AskOwns != "" {
		owned, err := issuer.Owns(ctx, be.Spec.BucketName, prefix, obs.Access, plan.AskOwns)
		if err != nil {
			o.err = fmt.Errorf("finding whether the etcd-backup secret holds the entry's own credential: %w", err)
			return nil, o.err
		}
		obs.Owned = &owned
		plan = Decide(obs)
	}
	return c.execute(ctx, be, o, obs, plan, issuer, prefix, entryData, currentData, bucketData)
}

// execute carries out plan's steps before gardener's write of the etcd-backup secret: the
// revocation before a rotation, the issuance, the data to publish; what follows the write
// (record, revoke, retire) it puts in o.
func (c *Credentials) execute(ctx context.Context, be *extensionsv1alpha1.BackupEntry, o *Outcome, obs Observed, plan Plan, issuer objectstore.EntryCredentialIssuer,
	prefix objectstore.Prefix, entryData, currentData, bucketData map[string][]byte) (map[string][]byte, error) {
	o.revoke, o.retire, o.rotation = plan.Revoke, plan.Retire, plan.Rotation
	switch plan.Publish {
	case PublishBucket:
		o.reach = bucketWide(be, plan.BucketWide)
		return bucketData, nil
	case PublishRecorded:
		data, err := c.provider.EtcdBackupSecretData(be, merged(entryData, currentData))
		if err != nil {
			return nil, err
		}
		o.published, o.reach = plan.Published, issuer.CredentialReach(be.Spec.BucketName, prefix, plan.Published.Access)
		o.issuer, o.prefix = issuer, prefix
		o.schedule = rotationSchedule(obs.Settings, o.published)
		return data, nil
	}
	access, recorded, settings := obs.Access, plan.Recorded, obs.Settings
	if plan.RevokeFirst {
		if err := issuer.RevokeEntryCredentials(objectstore.WithOperation(ctx, objectstore.OpRevokeCredentials), be.Spec.BucketName, prefix, access, []string{recorded.ID}); err != nil {
			o.err = fmt.Errorf("revoking the entry's credentials other than the published %s before its rotation: %w", recorded.ID, err)
			return nil, o.err
		}
	}
	cred, err := issuer.IssueEntryCredential(objectstore.WithOperation(ctx, objectstore.OpIssueCredential), be.Spec.BucketName, prefix, access, plan.InUse)
	if err != nil {
		return c.refused(ctx, be, o, obs, plan, bucketData, !obs.SecretExists, err)
	}
	data, err := c.provider.EtcdBackupSecretData(be, merged(entryData, cred.Data))
	if err != nil {
		return nil, err
	}
	o.revoke = append(o.revoke, plan.AfterIssue.Revoke...)
	if plan.AfterIssue.Retire != nil {
		o.retire = plan.AfterIssue.Retire
	}
	o.issuer, o.prefix = issuer, prefix
	o.published, o.issued = &entryRecord{ID: cred.ID, Issuer: settings.Issuer, IssuedIn: obs.Location, Access: access, IssuedAt: obs.Now.UTC().Truncate(time.Second)}, true
	o.reach = issuer.CredentialReach(be.Spec.BucketName, prefix, access)
	o.schedule = rotationSchedule(settings, o.published)
	return data, nil
}

// bucketCredentialAtQuota is the opt-in fallback (allowBucketCredentialAtQuota) of an entry
// whose own credential the store's quota refused (quotaErr): the bucket's credential is
// published, said by the condition (BucketWideAtQuota), an event and the isolation metric, and
// any credential of the entry recorded is revoked as at a switch-off (nothing holds it any
// more). The bucket's headroom look asks for the entry's reconcile once the store has room
// again (RequestEntriesAtQuota), and that pass issues and publishes the entry's own.
func bucketCredentialAtQuota(be *extensionsv1alpha1.BackupEntry, o *Outcome, bucketData map[string][]byte, quotaErr error) map[string][]byte {
	o.atQuota = true
	o.reach = bucketWide(be, fmt.Sprintf("the entry's own credential could not be issued at the store's quota (%v); "+
		"allowBucketCredentialAtQuota published the bucket's instead, and the entry's own is issued once there is room again "+
		"(free principals, or give this seed's backups an account of their own)", quotaErr))
	return bucketData
}

// entrySecretIsWorkloadIdentity says whether the entry's credentials secret is a workload
// identity.
func (c *Credentials) entrySecretIsWorkloadIdentity(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (bool, error) {
	s, err := secrets.Read(ctx, c.reader, be.Spec.SecretRef)
	if err != nil {
		return false, err
	}
	return s.Labels[securityv1alpha1constants.LabelPurpose] == securityv1alpha1constants.LabelPurposeWorkloadIdentityTokenRequestor, nil
}

// merged is base with over's keys over it.
func merged(base, over map[string][]byte) map[string][]byte {
	out := maps.Clone(base)
	if out == nil {
		out = map[string][]byte{}
	}
	maps.Copy(out, over)
	return out
}
