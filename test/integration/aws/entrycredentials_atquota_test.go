// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// atQuotaConfig asks for IAM entry credentials with the opt-in fallback at the account's quota.
const atQuotaConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"entryCredentials":{"issuer":"IAM","allowBucketCredentialAtQuota":true}}`

// conditionIs waits for condition typ with reason on obj.
func conditionIs(typ gardencorev1beta1.ConditionType, reason string) func(extensionsv1alpha1.Object) bool {
	return func(obj extensionsv1alpha1.Object) bool {
		c := v1beta1helper.GetCondition(obj.GetExtensionStatus().GetConditions(), typ)
		return c != nil && c.Reason == reason
	}
}

// TestEntryCredentialAtTheIAMQuota: the real controllers on the IAM stand-in (enforced by
// MinIO) with no user left in the account: the bucket says Exhausted, the entry gets the
// bucket's credential and says BucketWideAtQuota; the quota raised, the bucket's next look says
// Sufficient and asks the entry to try again, which publishes its own credential by itself.
func TestEntryCredentialAtTheIAMQuota(t *testing.T) {
	iam.SetUsersQuota(0)
	t.Cleanup(func() { iam.SetUsersQuota(awsstack.DefaultUsersQuota) })
	operator := secretData(minio.Endpoint)
	bb := env.CreateBucket(t, framework.UniqueName("atquota-"), operator, atQuotaConfig)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	env.WaitFor(t, bb, time.Minute, "headroom Exhausted", conditionIs(backupbucket.ConditionEntryCredentialsHeadroom, backupbucket.ReasonHeadroomExhausted))

	shoot := framework.UniqueName("shoot--q--")
	entry := shoot + "--1"
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntryWithConfig(t, entry, bb.Name, operator, atQuotaConfig)
	env.WaitFor(t, be, 2*time.Minute, "entry reconciled at the quota", framework.Succeeded)
	if c := v1beta1helper.GetCondition(be.Status.Conditions, backupentry.ConditionEntryCredentials); c == nil || c.Reason != backupentry.ReasonBucketWideAtQuota || !strings.Contains(c.Message, "LimitExceeded") {
		t.Fatalf("condition %+v; want BucketWideAtQuota with IAM's refusal", c)
	}
	if _, s := env.SecretKeys(t, shoot, "etcd-backup"); string(s.Data["accessKeyID"]) != string(operator["accessKeyID"]) {
		t.Fatalf("etcd-backup holds %q at the quota; want the bucket's credential", s.Data["accessKeyID"])
	}

	iam.SetUsersQuota(awsstack.DefaultUsersQuota) // headroom returns
	env.WaitFor(t, bb, time.Minute, "headroom Sufficient", conditionIs(backupbucket.ConditionEntryCredentialsHeadroom, backupbucket.ReasonHeadroomSufficient))
	env.WaitFor(t, be, 2*time.Minute, "the entry's own credential", conditionIs(backupentry.ConditionEntryCredentials, backupentry.ReasonOwnPrefix))
	_, etcdBackup := env.SecretKeys(t, shoot, "etcd-backup")
	id := string(etcdBackup.Data["accessKeyID"])
	prefix, _ := objectstore.EntryPrefix(entry)
	user := awsprovider.IAMEntryUserName(bb.Name, prefix, objectstore.EntryReadWrite)
	if _, keys, ok := iam.User(user); !ok || len(keys) != 1 || keys[0] != id {
		t.Fatalf("etcd-backup holds %q, IAM user %s has %v (exists %v); want its one key published", id, user, keys, ok)
	}
	if err := env.StoreFor(t, etcdBackup.Data).Probe(framework.Ctx(t), bb.Name); !conformance.Refused(err) {
		t.Fatalf("the entry's own credential listing the whole bucket: %v; want refused", err)
	}

	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	if _, _, ok := iam.User(user); ok {
		t.Fatalf("IAM user %s survived the entry's deletion", user)
	}
	env.DeleteAndWaitGone(t, bb, 2*time.Minute)
}
