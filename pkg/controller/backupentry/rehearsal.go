// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"fmt"
	"maps"
	"slices"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	securityv1alpha1constants "github.com/gardener/gardener/pkg/apis/security/v1alpha1/constants"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// PlanEntry is what be's next reconcile by this extension would change, read with reader and
// never written: its finalizer, the entry credentials it would issue, and the keys of the shoot's
// etcd-backup secret it would create, update or delete (names only, never values). It checks
// what GetETCDSecretData checks before it writes, so that an error is the one the reconcile would
// fail with (classified as the reconcile classifies it: objectstore.ErrInvalidConfig where it is
// the entry's). The read of the bucket (Probe) is the caller's read-only check, not a step here.
func PlanEntry(ctx context.Context, p provider.Provider, reader client.Reader, be *extensionsv1alpha1.BackupEntry) ([]objectstore.BucketChange, error) {
	if be.Spec.BucketName == "" {
		return nil, errEmptyBucketName
	}
	if err := checkName(be); err != nil {
		return nil, err
	}
	entrySecret, err := secrets.Read(ctx, reader, be.Spec.SecretRef)
	if err != nil {
		return nil, err
	}
	input := etcdSecretInput(be, entrySecret.Data, entrySecret.Labels[securityv1alpha1constants.LabelPurpose] == securityv1alpha1constants.LabelPurposeWorkloadIdentityTokenRequestor)
	want, err := p.EtcdBackupSecretData(be, input)
	if err != nil {
		return nil, err
	}
	var changes []objectstore.BucketChange
	if !slices.Contains(be.Finalizers, entryinfo.FinalizerName) {
		changes = append(changes, objectstore.BucketChange{Setting: "finalizer " + entryinfo.FinalizerName, Action: objectstore.ChangeCreate,
			Detail: "keeps the BackupEntry until this extension deleted its prefix"})
	}
	d := newDelegate(p, reader, nil, nil, options.DeletionOptions{})
	settings, cfg, err := d.creds.EntrySettings(be)
	if err != nil {
		return nil, err // a rehearsal that cannot read the settings cannot tell
	}
	why, err := d.creds.BucketWideBecause(ctx, be, settings, cfg)
	if err != nil {
		return nil, err
	}
	current, err := d.creds.ReadEtcdBackupSecret(ctx, be)
	if err != nil {
		return nil, err
	}
	var currentData map[string][]byte
	if current != nil {
		currentData = current.Data
	}
	if why == "" {
		// Whether an issued credential is reused or a new one issued is the issuer's to say
		// (its location, the records): the plan names the issuance, not the keys' values.
		return append(changes, objectstore.BucketChange{Setting: "entry credentials", Action: objectstore.ChangeCreate,
			Detail: fmt.Sprintf("a credential of issuer %q that reaches only the entry's prefix, published in the etcd-backup secret instead of the bucket's", settings.Issuer)}), nil
	}
	return append(changes, secretKeyChanges(currentData, want)...), nil
}

// etcdSecretInput is the data gardener's generic actuator hands GetETCDSecretData (extensions'
// genericactuator.deployEtcdBackupSecret at v1.150.0): the entry's secret's data (under a workload
// identity its config only) and the bucket's name.
func etcdSecretInput(be *extensionsv1alpha1.BackupEntry, data map[string][]byte, workloadIdentity bool) map[string][]byte {
	in := maps.Clone(data)
	if workloadIdentity {
		maps.DeleteFunc(in, func(k string, _ []byte) bool { return k != securityv1alpha1constants.DataKeyConfig })
	}
	if in == nil {
		in = map[string][]byte{}
	}
	in[v1beta1constants.DataKeyBackupBucketName] = []byte(be.Spec.BucketName)
	return in
}

// secretKeyChanges are the keys of the etcd-backup secret that writing want over current creates,
// updates or deletes (the actuator's merge patch replaces the data whole), by name, sorted.
func secretKeyChanges(current, want map[string][]byte) []objectstore.BucketChange {
	var changes []objectstore.BucketChange
	key := func(k string) string { return "etcd-backup secret key " + k }
	for _, k := range slices.Sorted(maps.Keys(want)) {
		old, ok := current[k]
		switch {
		case current == nil:
			// The whole secret is created: listed once below.
		case !ok:
			changes = append(changes, objectstore.BucketChange{Setting: key(k), Action: objectstore.ChangeCreate})
		case string(old) != string(want[k]):
			changes = append(changes, objectstore.BucketChange{Setting: key(k), Action: objectstore.ChangeUpdate})
		}
	}
	if current == nil {
		return []objectstore.BucketChange{{Setting: "etcd-backup secret", Action: objectstore.ChangeCreate, Detail: fmt.Sprintf("keys %v", slices.Sorted(maps.Keys(want)))}}
	}
	for _, k := range slices.Sorted(maps.Keys(current)) {
		if _, ok := want[k]; !ok {
			changes = append(changes, objectstore.BucketChange{Setting: key(k), Action: objectstore.ChangeDelete})
		}
	}
	return changes
}
