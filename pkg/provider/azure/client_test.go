// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestProbeIsOneCountedRequest: a probe of a missing bucket is one request to the store, which
// the metrics transport counts under the provider, the operation of its context and the status.
func TestProbeIsOneCountedRequest(t *testing.T) {
	stack.CheckProbeIsOneCountedRequest(t, newStore(t, azurite.SecretData()), azureprovider.Type, newBucketName())
}

func TestManagementCredentials(t *testing.T) {
	arm := startARM(t)
	name := newBucketName()
	if err := armStore(t, arm, arm.WorkloadIdentity(), true).EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
		t.Fatalf("workload identity: %v", err)
	}
	wrong := with(arm.ServicePrincipal(), "clientSecret", "not-the-secret-xyz")
	err := armStore(t, arm, wrong, false).EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"})
	if !errors.Is(err, objectstore.ErrUnauthenticated) || strings.Contains(err.Error(), "not-the-secret-xyz") {
		t.Fatalf("wrong client secret: %v; want ErrUnauthenticated without the secret", err)
	}
	cases := []struct {
		name string
		data map[string][]byte
		wi   bool
		want string
	}{
		{"service principal without subscription", with(arm.ServicePrincipal(), "subscriptionID", ""), false, `"subscriptionID"`},
		{"service principal without tenant", with(arm.ServicePrincipal(), "tenantID", ""), false, `"tenantID"`},
		{"workload identity without token", with(arm.WorkloadIdentity(), "token", ""), true, `"token"`},
		{"workload identity config without client", with(arm.WorkloadIdentity(), "config", "apiVersion: azure.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\ntenantID: t\nsubscriptionID: s\n"), true, "config.clientID"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client()}
			_, err := p.NewDataPlane(context.Background(), provider.Credentials{Data: c.data, WorkloadIdentity: c.wi, Region: "westeurope"})
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want ErrInvalidConfig naming %s", err, c.want)
			}
			if strings.Contains(err.Error(), arm.ClientSecret) {
				t.Fatalf("the error leaks the client secret: %v", err)
			}
		})
	}
}
