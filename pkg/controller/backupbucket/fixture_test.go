// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket_test

import (
	"context"
	"testing"

	extensionsbackupbucketcontroller "github.com/gardener/gardener/extensions/pkg/controller/backupbucket"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// createBucket creates the BackupBucket "bucket" of the operator's secret with cfg as its
// providerConfig.
func createBucket(t *testing.T, k8s client.Client, cfg controllertest.Config) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket"}, Spec: extensionsv1alpha1.BackupBucketSpec{
		SecretRef: controllertest.SecretRef, DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: controllertest.RawConfig(cfg)}}}
	if err := k8s.Create(context.Background(), bb); err != nil {
		t.Fatal(err)
	}
	return bb
}

// createCopySecret creates the copy's credentials, the secret ref-backup-copy in the garden
// namespace of copy.credentialsRef backup-copy.
func createCopySecret(t *testing.T, k8s client.Client) {
	t.Helper()
	if err := k8s.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}, Data: map[string][]byte{"key": []byte("copy")}}); err != nil {
		t.Fatal(err)
	}
}

// newActuator is the BackupBucket actuator of a provider whose every store is store.
func newActuator(k8s client.Client, store controllertest.Store, recorder events.EventRecorder) extensionsbackupbucketcontroller.Actuator {
	return backupbucket.NewActuator(provider.Register(controllertest.Provider{Store: store}), k8s, k8s, recorder, options.DeletionOptions{})
}
