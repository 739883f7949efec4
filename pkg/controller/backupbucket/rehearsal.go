// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// PlanCredentials is what the credential lifecycle of bb's next reconcile with cfg would do
// (generated credentials issued, copied, revoked; the generated secret, bb's status and events
// written), read with reader and never written: the same observe and decide a reconcile runs,
// without its execution. Nothing where cfg asks for no generated credentials and none exist.
func PlanCredentials(ctx context.Context, p provider.Provider, reader client.Reader, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) ([]objectstore.BucketChange, error) {
	a := &actuator{provider: p, reader: reader}
	o, _, err := a.observe(ctx, bb, cfg)
	if err != nil {
		return nil, err
	}
	var changes []objectstore.BucketChange
	for _, s := range decide(o) {
		changes = append(changes, objectstore.BucketChange{Setting: "generated credentials", Action: credentialAction(s), Detail: s.String()})
	}
	return changes, nil
}

// credentialAction is what a step of the credential lifecycle does, as a change.
func credentialAction(s step) objectstore.ChangeAction {
	switch s.(type) {
	case issueStep:
		return objectstore.ChangeCreate
	case revokeStep, dropStep:
		return objectstore.ChangeDelete
	}
	return objectstore.ChangeUpdate
}

// ProbeVerdict is BucketAvailable's status and reason for a probe that failed with err, for a
// caller that probes without publishing (the rehearsal).
func ProbeVerdict(err error) (gardencorev1beta1.ConditionStatus, string) { return probeVerdict(err) }
