// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const configHead = `{"apiVersion":"openstack.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`

func TestGeneratedApplicationCredentials(t *testing.T) {
	env.GeneratedCredentialsFlow(t, framework.GeneratedCredentials{
		Operator: cloud.SecretData("demo"),
		Config:   configHead + `,"generatedCredentials":{"rotation":{"period":"720h","gracePeriod":"1h"}}}`,
		Off:      configHead + `}`,
	})
}

// TestHandBackRevokesGeneratedApplicationCredentials: a hand-back leaves no application
// credential of this extension valid in Keystone (issue 36): refused while the entry holds it,
// then revoked, and Swift refuses it (framework.HandBackFlow).
func TestHandBackRevokesGeneratedApplicationCredentials(t *testing.T) {
	env.HandBackFlow(t, framework.GeneratedCredentials{
		Operator: cloud.SecretData("demo"),
		Config:   configHead + `,"generatedCredentials":{"rotation":{"period":"720h","gracePeriod":"1h"}}}`,
		Off:      configHead + `}`,
		HandBack: configHead + `,"handBack":true}`,
	})
}

func TestCloudWithoutAccessRulesPassesThroughOnlyWhenAllowed(t *testing.T) {
	// Region NoAccessRules reaches Swift through a proxy that cannot check access rules.
	operator := stack.With(cloud.SecretData("demo"), "region", "NoAccessRules")
	refused := env.CreateBucket(t, framework.UniqueName("norules-"), operator, configHead+`,"generatedCredentials":{}}`)
	env.WaitFor(t, refused, 2*time.Minute, "bucket refused", framework.FailedWith(gardencorev1beta1.ErrorConfigurationProblem))
	if refused.Status.GeneratedSecretRef != nil {
		t.Fatalf("status.generatedSecretRef = %v for a credential the cloud refuses", refused.Status.GeneratedSecretRef)
	}
	if msg := refused.Status.LastError.Description; !strings.Contains(msg, "accessRules: false") || !strings.Contains(msg, "allowPassThrough: true") {
		t.Fatalf("lastError %q does not name the options", msg)
	}

	allowed := env.CreateBucket(t, framework.UniqueName("norules-"), operator, configHead+`,"generatedCredentials":{"allowPassThrough":true}}`)
	env.WaitFor(t, allowed, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	if allowed.Status.GeneratedSecretRef != nil {
		t.Fatalf("status.generatedSecretRef = %v; want none (pass-through)", allowed.Status.GeneratedSecretRef)
	}
	c := v1beta1helper.GetCondition(allowed.Status.Conditions, backupbucket.ConditionGeneratedCredentials)
	if c == nil || c.Status != gardencorev1beta1.ConditionFalse || c.Reason != "PassThrough" {
		t.Fatalf("condition %+v; want False/PassThrough", c)
	}
	if !env.EventuallyHasEvent(t, allowed.Name, backupbucket.ReasonPassThrough, "accessRules", 30*time.Second) {
		t.Fatal("no PassThrough warning event naming the cause")
	}
	if _, err := env.GeneratedSecret(t, allowed.Name); err == nil {
		t.Fatal("a generated secret was written for a pass-through bucket")
	}
	env.DeleteAndWaitGone(t, allowed, 2*time.Minute)
	env.DeleteAndWaitGone(t, refused, 2*time.Minute)
}
