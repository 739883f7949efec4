// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/reconciled"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// handBackRecheck is how long after a pass the scheduler asks for the next look at a hand-back
// that waits (handBackDue).
const handBackRecheck = time.Minute

// handBack runs one pass of the hand-back once the store is in the incumbent's form: it
// observes, decides (decideHandBack) and carries the plan out. A hand-back that waits is no
// error: condition HandBack says for what. storeWait is EnsureBucket's answer that the store
// cannot be handed back yet (nil: it can); mgmt is the management plane it came from, which
// releaseMarksStep calls again.
func (a *actuator) handBack(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, mgmt objectstore.Management, storeWait *objectstore.HandBackWaitError) error {
	o, err := a.observeHandBack(ctx, bb, cfg)
	if err != nil {
		return err
	}
	o.store = storeWait
	return (&handBackExecution{a: a, log: log, bb: bb, cfg: cfg, mgmt: mgmt}).run(ctx, decideHandBack(o))
}

// observeHandBack reads what a pass of the hand-back decides on.
func (a *actuator) observeHandBack(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) (handBackObserved, error) {
	o := handBackObserved{now: time.Now().UTC(), entryCredentials: entryIssuerName(cfg)}
	secret, exists, err := readGenerated(ctx, a.reader, bb)
	if err != nil {
		return o, err
	}
	if exists {
		o.generated = credentialIDs(secret)
	}
	if g := cfg.GenerationSettings(); g != nil && o.generated != "" {
		issuer, err := a.newIssuer(ctx, bb, cfg, g.Issuer)
		if err != nil {
			return o, err
		}
		_, o.storeKeys = issuer.(objectstore.StoreKeysIssuer)
		o.generating = issuer != nil
	}
	if o.entryIssuers, err = entryIssuersOf(bb); err != nil {
		return o, err
	}
	if c := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionHandBack); c != nil && c.Reason == ReasonHandBackSettling {
		o.settlingSince = c.LastUpdateTime.Time // the message never changes while Settling: written once
	}
	if o.needsSecrets() {
		operator, err := a.operatorSecret(ctx, bb)
		if err != nil {
			return o, err
		}
		if o.holders, err = a.holdersOnTheSeed(ctx, bb, operator.Data); err != nil {
			return o, err
		}
	}
	return o, nil
}

// handBackExecution carries out one pass's hand-back plan.
type handBackExecution struct {
	a    *actuator
	log  logr.Logger
	bb   *extensionsv1alpha1.BackupBucket
	cfg  provider.Config
	mgmt objectstore.Management
	// left says what the pass's sweeps left (sweepEntryPrincipalsStep).
	left []string
}

// run carries out plan step by step, stopping at the first step that fails or waits.
func (e *handBackExecution) run(ctx context.Context, plan []handBackStep) error {
	for _, s := range plan {
		if err := e.do(ctx, s); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

func (e *handBackExecution) do(ctx context.Context, s handBackStep) error {
	a, bb := e.a, e.bb
	switch s := s.(type) {
	case handBackWaitStep:
		return e.wait(ctx, s)
	case revokeGeneratedStep:
		secret, exists, err := readGenerated(ctx, a.reader, bb)
		if err != nil {
			return err
		}
		e.log.Info("Bucket is handed back: no secret on this seed holds its generated credentials any more; revoking them now", "credentials", credentialIDs(secret), "retireAfter", secret.Annotations[AnnotationRetireAfter])
		return a.execution(e.log, bb, e.cfg, nil, nil, secret, exists).run(ctx, completeRetirement(secret, "the generated ones were revoked by the hand-back once no secret on this seed held them"))
	case sweepEntryPrincipalsStep:
		return e.sweep(ctx, s)
	case principalsLeftStep:
		return e.principalsLeft(ctx)
	case releasingStep:
		return a.setHandBackCondition(ctx, bb, gardencorev1beta1.ConditionProgressing, ReasonHandBackReleasing,
			"Nothing this extension generated or issued for the bucket or its entries is left valid; its finalizer is being removed from the bucket's BackupEntries")
	case releaseEntriesStep:
		released, err := entryinfo.ReleaseEntriesOf(ctx, a.client, a.reader, bb.Name)
		if err != nil {
			return fmt.Errorf("bucket %q is handed back, but releasing its BackupEntries from finalizer %s failed: %w", bb.Name, entryinfo.FinalizerName, err)
		}
		e.log.Info("Bucket is handed back: its BackupEntries no longer carry this extension's finalizer", "bucket", bb.Name, "released", released)
		return nil
	case releaseMarksStep:
		err := e.mgmt.EnsureBucket(objectstore.WithOperation(ctx, objectstore.OpEnsureBucket), objectstore.Bucket{Name: bb.Name, Region: bb.Spec.Region, HandBackComplete: true})
		var storeWait *objectstore.HandBackWaitError
		if errors.As(err, &storeWait) {
			return e.wait(ctx, storeWaitStep(storeWait))
		}
		if err != nil {
			return fmt.Errorf("bucket %q: removing this extension's marks at the end of the hand-back: %w", bb.Name, err)
		}
		return nil
	case handedBackStep:
		return a.setHandBackCondition(ctx, bb, gardencorev1beta1.ConditionTrue, ReasonHandedBack, s.message)
	}
	return fmt.Errorf("unknown step %T of the hand-back", s)
}

// wait carries out a handBackWaitStep: the entries named are asked for a reconcile, the
// condition says what the hand-back waits for (with an event when that changes), and the plan
// ends without an error.
func (e *handBackExecution) wait(ctx context.Context, s handBackWaitStep) error {
	a, bb := e.a, e.bb
	for _, name := range s.nudge {
		be := &extensionsv1alpha1.BackupEntry{}
		if err := a.reader.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading BackupEntry %s to ask for its reconcile: %w", name, err)
		}
		if err := reconciled.RequestReconcile(ctx, a.client, be); err != nil {
			return fmt.Errorf("asking BackupEntry %s for a reconcile, which rewrites its etcd-backup secret for the hand-back: %w", name, err)
		}
	}
	if old := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionHandBack); old == nil || old.Reason != s.reason {
		a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonHandBackWaiting, "HandBack", "%s", extstatus.EventNote(s.message))
	}
	e.log.Info("The hand-back waits", "reason", s.reason, "message", s.message, "nudged", len(s.nudge))
	if err := a.setHandBackCondition(ctx, bb, s.status, s.reason, s.message); err != nil {
		return err
	}
	return errStop
}

// sweep carries out a sweepEntryPrincipalsStep with the bucket's sweep (sweepEntryIssuer in
// mode sweepHandBack): done drops the place from the record; what is left, or cannot be swept
// (named by the sweep's own event as well), is kept in e.left for principalsLeftStep.
func (e *handBackExecution) sweep(ctx context.Context, s sweepEntryPrincipalsStep) error {
	a, bb := e.a, e.bb
	done, err := a.sweepEntryIssuer(ctx, e.log, bb, e.cfg, s.issuer, s.location, sweepHandBack, "HandBack")
	var refused *entrySweepRefusedError
	switch {
	case errors.As(err, &refused):
		e.left = append(e.left, refused.message)
		return nil
	case err != nil:
		return err
	case !done:
		e.left = append(e.left, fmt.Sprintf("entry issuer %s keeps principals it made for the bucket's entries (in %s, marked with the bucket's name) that it cannot tell to be this extension's alone", s.issuer, orAnywhere(s.location)))
		return nil
	}
	record, err := entryIssuersOf(bb)
	if err != nil {
		return err
	}
	record.remove(s.issuer, s.location)
	return a.writeEntryIssuers(ctx, bb, record)
}

// principalsLeft carries out a principalsLeftStep: the hand-back waits while a sweep left any.
func (e *handBackExecution) principalsLeft(ctx context.Context) error {
	if len(e.left) == 0 {
		return nil
	}
	return e.wait(ctx, handBackWaitStep{status: gardencorev1beta1.ConditionProgressing, reason: ReasonHandBackPrincipals,
		message: fmt.Sprintf("The hand-back waits: %s. Tried again on every look; once none is left (swept, or removed by hand and named in annotation %s), the hand-back finishes", strings.Join(e.left, "; "), AnnotationEntryPrincipalsRemoved)})
}

// setHandBackCondition sets condition HandBack, writing only when its status, reason or message
// changes (so a Settling condition's lastUpdateTime is when it turned Settling).
func (a *actuator) setHandBackCondition(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, status gardencorev1beta1.ConditionStatus, reason, message string) error {
	err := extstatus.Patch(ctx, a.client, a.reader, bb, func(bb *extensionsv1alpha1.BackupBucket) bool {
		if old := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionHandBack); old != nil && old.Status == status && old.Reason == reason && old.Message == message {
			return false
		}
		bb.Status.Conditions, _ = extstatus.SetCondition(bb.Status.Conditions, ConditionHandBack, status, reason, message, time.Now())
		return true
	})
	if err != nil {
		return fmt.Errorf("setting the %s condition: %w", ConditionHandBack, err)
	}
	return nil
}

// withdrawHandBack removes condition HandBack from a bucket whose configuration no longer asks
// for a hand-back: nothing would refresh it.
func (a *actuator) withdrawHandBack(ctx context.Context, bb *extensionsv1alpha1.BackupBucket) error {
	err := extstatus.Patch(ctx, a.client, a.reader, bb, func(bb *extensionsv1alpha1.BackupBucket) bool {
		if v1beta1helper.GetCondition(bb.Status.Conditions, ConditionHandBack) == nil {
			return false
		}
		bb.Status.Conditions = v1beta1helper.RemoveConditions(bb.Status.Conditions, ConditionHandBack)
		return true
	})
	if err != nil {
		return fmt.Errorf("removing the %s condition: %w", ConditionHandBack, err)
	}
	return nil
}

// handBackDue is when the scheduler asks for the next look at a hand-back that waits: a
// recheck after the last operation, as long as condition HandBack says it waits and the
// configuration still asks for it. ok is false when nothing waits.
func handBackDue(bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) (due time.Time, ok bool) {
	c := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionHandBack)
	op := bb.Status.LastOperation
	if !cfg.HandsBack() || c == nil || c.Status == gardencorev1beta1.ConditionTrue || op == nil {
		return time.Time{}, false
	}
	return op.LastUpdateTime.Add(handBackRecheck), true
}

// holdersOnTheSeed counts (and names a few of) the secrets on this seed that the bucket's shoots
// read and that do not hold operator, the operator's credentials: each BackupEntry's secret
// (spec.secretRef, which gardenlet writes with the data of the bucket's secret or of its
// generated secret in the garden), and the etcd-backup secret (source-etcd-backup for a source-
// entry) that the entry's reconcile derived from it in the shoot's namespace, which
// etcd-backup-restore reads: one that holds an entry's own credential or a generated one does
// not. A secret that is missing holds nothing; an etcd-backup secret written by another entry is
// that entry's. An entry whose secret holds operator but whose etcd-backup secret does not is
// stale: its own reconcile rewrites it. What this seed cannot see (gardenlet's copy in the
// garden, a source- entry on another seed) is documented in docs/migrating.md.
func (a *actuator) holdersOnTheSeed(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, operator map[string][]byte) (holders, error) {
	var h holders
	hold := func(s *corev1.Secret) {
		h.count++
		if len(h.first) < holdersNamed {
			h.first = append(h.first, s.Namespace+"/"+s.Name)
		}
	}
	err := eachEntryOf(ctx, a.reader, bb.Name, func(be *extensionsv1alpha1.BackupEntry) error {
		entryMoved := true
		if ref := be.Spec.SecretRef; ref.Name != "" {
			entrySecret, err := a.secretIfAny(ctx, ref.Namespace, ref.Name)
			if err != nil {
				return err
			}
			if entrySecret != nil && !maps.EqualFunc(entrySecret.Data, operator, bytes.Equal) {
				hold(entrySecret)
				entryMoved = false
			}
		}
		key := entryinfo.EtcdBackupSecretKey(be)
		etcdSecret, err := a.secretIfAny(ctx, key.Namespace, key.Name)
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
			if entryMoved {
				h.stale = append(h.stale, be.Name)
			}
		}
		return nil
	})
	return h, err
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
