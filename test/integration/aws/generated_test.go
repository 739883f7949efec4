// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

func TestGeneratedMinIOCredentials(t *testing.T) {
	const head = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]`
	env.GeneratedCredentialsFlow(t, framework.GeneratedCredentials{
		Operator: secretData(minio.Endpoint),
		Config:   head + `,"generatedCredentials":{"issuer":"MinIO"}}`,
		Off:      head + `}`,
	})
}

func TestPreviousCredentialIsRevokedWhenItsGraceEndsWithoutAnyTrigger(t *testing.T) {
	// gardenlet reconciles a bucket only when its spec changes: the extension's scheduler asks for
	// the reconcile that revokes the previous credential once its grace period is over.
	const config = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"generatedCredentials":{"issuer":"MinIO","rotation":{"gracePeriod":"3s"}}}`
	bb := env.CreateBucket(t, framework.UniqueName("sched-"), secretData(minio.Endpoint), config)
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	first, err := env.GeneratedSecret(t, bb.Name)
	if err != nil {
		t.Fatal(err)
	}
	env.Trigger(t, bb, backupbucket.AnnotationRotateCredentials, "r1")
	env.WaitFor(t, bb, time.Minute, "rotation reconciled", framework.SucceededAfter(time.Now()))
	second, err := env.GeneratedSecret(t, bb.Name)
	if err != nil || second.Annotations[backupbucket.AnnotationCredential] == first.Annotations[backupbucket.AnnotationCredential] {
		t.Fatalf("no new credential published (%v)", err)
	}
	// No trigger from here on.
	deadline := time.Now().Add(time.Minute)
	for {
		err := env.StoreFor(t, first.Data).PutObject(framework.Ctx(t), bb.Name, "shoot--s--1/x", []byte("x"))
		if conformance.Refused(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the previous credential still works a minute after its 3s grace period: %v", err)
		}
		time.Sleep(time.Second)
	}
	if err := env.StoreFor(t, second.Data).PutObject(framework.Ctx(t), bb.Name, "shoot--s--1/y", []byte("y")); err != nil {
		t.Fatalf("the published credential: %v", err)
	}
	env.DeleteAndWaitGone(t, bb, time.Minute)
}

func TestBucketAvailabilityFollowsTheStore(t *testing.T) {
	env.AvailabilityFlow(t, framework.Availability{
		Operator:  secretData(minio.Endpoint),
		Config:    `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"generatedCredentials":{"issuer":"MinIO"}}`,
		Generated: true,
	})
}

// TestHandBackRevokesGeneratedMinIOUsers: a hand-back leaves no MinIO user of this extension
// valid (issue 36): refused while the entry holds it, then the user is revoked (framework.HandBackFlow).
func TestHandBackRevokesGeneratedMinIOUsers(t *testing.T) {
	const head = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]`
	env.HandBackFlow(t, framework.GeneratedCredentials{
		Operator: secretData(minio.Endpoint),
		Config:   head + `,"generatedCredentials":{"issuer":"MinIO"}}`,
		Off:      head + `}`,
		HandBack: head + `,"handBack":true}`,
	})
}
