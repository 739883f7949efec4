// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsbackupentrycontroller "github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// ReasonHandBackRefused is the event reason of a hand-back refused because a credential this
// extension generated for the bucket is still valid.
const ReasonHandBackRefused = "HandBackRefused"

// holdersNamed is how many of the secrets that still hold a generated credential a refusal names.
const holdersNamed = 5

// HandBackRefusedError reports a hand-back (providerConfig handBack) refused because credentials
// this extension generated for the bucket are still valid: the provider extension that takes
// the bucket back knows nothing of them and would never revoke them. Nothing is handed back and
// nothing is revoked. It matches objectstore.ErrInvalidConfig (ERR_CONFIGURATION_PROBLEM): the
// operator acts.
type HandBackRefusedError struct {
	Bucket string
	// IDs names the generated credentials still valid (IDs, never values).
	IDs string
	// Generating is true while the providerConfig still asks for generated credentials.
	Generating bool
	// Copy names the generated secret (namespace/name) that holds the operator's credentials
	// while the generated ones retire.
	Copy string
	// Holders counts the secrets on this seed that shoots of the bucket read and that do not
	// hold what Copy holds yet; First names a few (namespace/name).
	Holders int
	First   []string
}

func (e *HandBackRefusedError) Error() string {
	if e.Generating {
		return fmt.Sprintf("providerConfig.handBack: bucket %q still publishes generated credential %q (providerConfig.generatedCredentials), which the provider extension taking the bucket back neither knows nor revokes: nothing is handed back. "+
			"Remove handBack and generatedCredentials, wait until this BackupBucket has succeeded with condition GeneratedCredentials=False/Retiring "+
			"(gardenlet hands the entries the operator's credentials only while the bucket succeeds), then set handBack: "+
			"it revokes the generated credentials once no secret on this seed holds them (docs/migrating.md)", e.Bucket, e.IDs)
	}
	more := ""
	if e.Holders > len(e.First) {
		more = fmt.Sprintf(" and %d more", e.Holders-len(e.First))
	}
	return fmt.Sprintf("providerConfig.handBack: generated credentials %q of bucket %q are still valid, and %d secrets on this seed that its shoots read do not hold the operator's credentials that %s holds yet (%s%s): "+
		"revoking now would stop those backups, and the provider extension taking the bucket back would never revoke them, so nothing is handed back or revoked. "+
		"gardenlet hands the entries the operator's credentials only while this BackupBucket succeeds: remove handBack, wait until those secrets hold them, "+
		"then set handBack again: it revokes the generated credentials once no secret on this seed holds them (docs/migrating.md)",
		e.IDs, e.Bucket, e.Holders, e.Copy, strings.Join(e.First, ", "), more)
}

// Is makes errors.Is(err, objectstore.ErrInvalidConfig) true.
func (e *HandBackRefusedError) Is(target error) bool { return target == objectstore.ErrInvalidConfig }

// handBackCredentials leaves no credential this extension generated for the bucket valid after
// a hand-back: the provider extension that takes the bucket back knows nothing of them. It runs
// after the credential lifecycle of the same pass, so a generated secret that records
// credentials holds the operator's credentials (decideRetirement) unless generation is still
// asked for.
//
//   - Generation still asked for: refused (*HandBackRefusedError), unless the issuer's
//     credentials are the store's own keys (objectstore.StoreKeysIssuer, Azure's account keys),
//     which that extension publishes and rotates as its own: they are kept.
//   - Credentials retiring: revoked now, ahead of the retirement's time, once every secret on
//     this seed that the bucket's shoots read holds the operator's credentials (holdersOnTheSeed);
//     refused while one does not. The grace exists for what cannot be seen; a hand-back cannot
//     wait for it and must not leave anything behind.
//   - Nothing recorded (never generated, passed through, retired): nothing to do.
func (a *actuator) handBackCredentials(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) error {
	secret, exists, err := readGenerated(ctx, a.reader, bb)
	if err != nil {
		return err
	}
	ids := ""
	if exists {
		ids = credentialIDs(secret)
	}
	if ids == "" {
		return nil
	}
	if g := cfg.GenerationSettings(); g != nil {
		issuer, err := a.newIssuer(ctx, bb, cfg, g.Issuer)
		if err != nil {
			return err
		}
		if _, storeKeys := issuer.(objectstore.StoreKeysIssuer); storeKeys {
			log.Info("Bucket is handed back with its generated credentials: they are keys of the store, which the provider extension taking it back uses as its own", "credentials", ids)
			return nil
		}
		if issuer != nil {
			return a.refuseHandBack(log, bb, &HandBackRefusedError{Bucket: bb.Name, IDs: ids, Generating: true})
		}
	}
	holders, first, err := a.holdersOnTheSeed(ctx, bb, secret.Data)
	if err != nil {
		return err
	}
	if holders > 0 {
		return a.refuseHandBack(log, bb, &HandBackRefusedError{Bucket: bb.Name, IDs: ids, Copy: secret.Namespace + "/" + secret.Name, Holders: holders, First: first})
	}
	log.Info("Bucket is handed back: no secret on this seed holds its generated credentials any more; revoking them now", "credentials", ids, "retireAfter", secret.Annotations[AnnotationRetireAfter])
	return a.execution(log, bb, cfg, nil, nil, secret, exists).run(ctx, completeRetirement(secret, "the generated ones were revoked by the hand-back once no secret on this seed held them"))
}

// refuseHandBack reports a refused hand-back with a warning event and returns it.
func (a *actuator) refuseHandBack(log logr.Logger, bb *extensionsv1alpha1.BackupBucket, refused *HandBackRefusedError) error {
	log.Info("Hand-back refused: generated credentials are still valid", "credentials", refused.IDs, "generating", refused.Generating, "holders", refused.Holders)
	a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonHandBackRefused, "HandBack", "%v", refused)
	return refused
}

// holdersOnTheSeed counts (and names a few of) the secrets on this seed that the bucket's shoots
// read and that do not hold operator, the operator's credentials the generated secret holds: each
// BackupEntry's secret (spec.secretRef, which gardenlet writes with the data of its copy of the
// generated secret in the garden), and the etcd-backup secret (source-etcd-backup for a
// source- entry) that the entry's reconcile derived from it in the shoot's namespace, which
// etcd-backup-restore reads. A secret that is missing holds nothing; an etcd-backup secret
// written by another entry is that entry's. What this seed cannot see (gardenlet's copy in the
// garden, a source- entry on another seed) is documented in docs/migrating.md.
func (a *actuator) holdersOnTheSeed(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, operator map[string][]byte) (int, []string, error) {
	count, first := 0, []string(nil)
	hold := func(s *corev1.Secret) {
		count++
		if len(first) < holdersNamed {
			first = append(first, s.Namespace+"/"+s.Name)
		}
	}
	err := eachEntryOf(ctx, a.reader, bb.Name, func(be *extensionsv1alpha1.BackupEntry) error {
		if ref := be.Spec.SecretRef; ref.Name != "" {
			entrySecret, err := a.secretIfAny(ctx, ref.Namespace, ref.Name)
			if err != nil {
				return err
			}
			if entrySecret != nil && !maps.EqualFunc(entrySecret.Data, operator, bytes.Equal) {
				hold(entrySecret)
			}
		}
		namespace, _ := extensionsbackupentrycontroller.ExtractShootDetailsFromBackupEntryName(be.Name)
		name := v1beta1constants.BackupSecretName
		if strings.HasPrefix(be.Name, v1beta1constants.BackupSourcePrefix) {
			name = v1beta1constants.BackupSourcePrefix + "-" + v1beta1constants.BackupSecretName
		}
		etcdSecret, err := a.secretIfAny(ctx, namespace, name)
		if err != nil || etcdSecret == nil {
			return err
		}
		if by, ok := etcdSecret.Annotations[genericactuator.AnnotationKeyCreatedByBackupEntry]; ok && by != be.Name {
			return nil
		}
		// What the entry's reconcile writes from operator (gardener's generic actuator adds the
		// bucket's name before the provider picks its keys).
		from := maps.Clone(operator)
		if from == nil {
			from = map[string][]byte{}
		}
		from[v1beta1constants.DataKeyBackupBucketName] = []byte(be.Spec.BucketName)
		want, err := a.provider.EtcdBackupSecretData(be, from)
		if err != nil {
			return fmt.Errorf("BackupEntry %s: the etcd-backup secret data of the operator's credentials: %w", be.Name, err)
		}
		if !maps.EqualFunc(etcdSecret.Data, want, bytes.Equal) {
			hold(etcdSecret)
		}
		return nil
	})
	return count, first, err
}

// secretIfAny reads a secret from the API server; a missing one is nil.
func (a *actuator) secretIfAny(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	err := a.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading secret %s/%s: %w", namespace, name, err)
	}
	return s, nil
}
