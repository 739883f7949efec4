// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/gardener/gardener/pkg/controllerutils"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestSwitchFollowsTheEtcd: with copy.serve copy, the entry's etcd-backup names the copy bucket
// but keeps the primary's credentials while the shoot's Etcd names the primary (phase 1: the
// sidecar keeps writing the primary); once gardenlet rolls the Etcd onto the copy (played here:
// the Etcd's container patched, no reconcile asked for), the extension's Etcd watch gives
// etcd-backup the copy's credentials (phase 2). Coming back is the mirror image.
func TestSwitchFollowsTheEtcd(t *testing.T) {
	ctx := context.Background()
	r := startServing(t, ctx, "sw-")
	env, copyBucket := r.env, r.copyBucket
	be := r.entryOn(t, "aws")
	shoot := strings.TrimSuffix(be.Name, "--1")
	rollEtcd(t, env, shoot, be, r.bb.Name)

	step := time.Now()
	setEntryConfig(t, env, be, r.withCopy("copy"))
	env.WaitFor(t, be, time.Minute, "entry reconciled serving the copy", framework.SucceededAfter(step))
	holdsCredentials(t, env, shoot, copyBucket, r.primary.Endpoint, "phase 1")
	if !env.EventuallyHasEvent(t, be.Name, backupentry.ReasonBackupSwitchPending, "switch pending: the Etcd still names bucket", 10*time.Second) {
		t.Errorf("no %s event", backupentry.ReasonBackupSwitchPending)
	}

	rollEtcd(t, env, shoot, be, copyBucket)
	waitCredentials(t, env, shoot, copyBucket, r.second.Endpoint, "phase 2, after the roll onto the copy")

	// Coming back: the primary's name, the copy's credentials until the roll back.
	setEntryConfig(t, env, be, r.withCopy("primary"))
	waitCredentials(t, env, shoot, r.bb.Name, r.second.Endpoint, "coming back, the Etcd still on the copy")
	rollEtcd(t, env, shoot, be, r.bb.Name)
	waitCredentials(t, env, shoot, r.bb.Name, r.primary.Endpoint, "back, after the roll onto the primary")
}

// rollEtcd plays gardenlet's shoot reconcile: it deploys the shoot's Etcd with the backup store
// named container (from etcd-backup's bucketName, which the caller passes).
func rollEtcd(t *testing.T, env *framework.Env, shoot string, be *extensionsv1alpha1.BackupEntry, container string) {
	t.Helper()
	e := &druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: v1beta1constants.ETCDMain, Namespace: shoot}}
	if _, err := controllerutils.GetAndCreateOrMergePatch(framework.Ctx(t), env.K8s, e, func() error {
		e.Spec.Replicas = 1
		e.Spec.Labels = map[string]string{"app": "etcd-statefulset", "role": "main"}
		e.Spec.Backup.Store = &druidcorev1alpha1.StoreSpec{
			SecretRef: &corev1.SecretReference{Name: v1beta1constants.BackupSecretName},
			Container: new(container),
			Provider:  new(druidcorev1alpha1.StorageProvider("aws")),
			Prefix:    be.Name + "/etcd-main",
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// holdsCredentials checks that shoot's etcd-backup names bucket with the credentials of the
// MinIO server at endpoint (both servers' root users have one name: the endpoint tells them
// apart).
func holdsCredentials(t *testing.T, env *framework.Env, shoot, bucket, endpoint, what string) {
	t.Helper()
	if ok, got := credentialsOf(t, env, shoot, bucket, endpoint); !ok {
		t.Fatalf("%s: etcd-backup %s; want bucket %q with endpoint %q", what, got, bucket, endpoint)
	}
}

// waitCredentials waits until holdsCredentials holds.
func waitCredentials(t *testing.T, env *framework.Env, shoot, bucket, endpoint, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, got := credentialsOf(t, env, shoot, bucket, endpoint)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: etcd-backup %s; want bucket %q with endpoint %q", what, got, bucket, endpoint)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func credentialsOf(t *testing.T, env *framework.Env, shoot, bucket, endpoint string) (bool, string) {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.K8s.Get(framework.Ctx(t), client.ObjectKey{Namespace: shoot, Name: v1beta1constants.BackupSecretName}, s); err != nil {
		t.Fatal(err)
	}
	name, got := string(s.Data[v1beta1constants.DataKeyBackupBucketName]), string(s.Data["endpoint"])
	return name == bucket && got == endpoint, "names bucket " + name + " with endpoint " + got
}
