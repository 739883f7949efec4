// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

func generatingConfig(g osapi.GeneratedCredentialsConfig) *osapi.BackupBucketConfig {
	return &osapi.BackupBucketConfig{GeneratedCredentials: &g}
}

// issuing is the bucket controller's view of Swift with generated credentials: the store and the
// issuer the config names, from the same credentials.
func issuing(t *testing.T, data map[string][]byte, cfg *osapi.BackupBucketConfig) (conformance.Stores, objectstore.CredentialIssuer) {
	t.Helper()
	creds := provider.Credentials{Data: data, Region: "RegionOne"}
	s := conformance.StoresFor(t, testProvider, creds, cfg)
	iss, err := testProvider.NewIssuer(context.Background(), creds, cfg, cfg.GenerationSettings().Issuer)
	if err != nil {
		t.Fatal(err)
	}
	if iss == nil {
		t.Fatal("a config with generatedCredentials gets no issuer")
	}
	return s, iss
}

func TestGeneratedApplicationCredentials(t *testing.T) {
	store, iss := issuing(t, cloud.SecretData("demo"), generatingConfig(osapi.GeneratedCredentialsConfig{}))
	conformance.RunIssuer(t, conformance.IssuerHarness{
		Harness: conformance.Harness{
			Store:         store,
			NewBucketName: newContainerName,
			Region:        "RegionOne",
		},
		Issuer:   iss,
		StoreFor: func(t *testing.T, data map[string][]byte) conformance.Stores { return newStore(t, data) },
	})
}

// keystone is an identity client of the demo user, to inspect what the issuer created.
func keystone(t *testing.T) (*gophercloud.ServiceClient, string) {
	t.Helper()
	ctx := context.Background()
	pc, err := gopenstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: cloud.AuthURL,
		Username: "demo", Password: "demopass", DomainName: "Default", TenantName: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	user, err := pc.GetAuthResult().(tokens.CreateResult).ExtractUser()
	if err != nil {
		t.Fatal(err)
	}
	return &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(cloud.AuthURL)}, user.ID
}

func TestIssuedCredentialIsRestrictedExpiringAndHoldsNoPassword(t *testing.T) {
	ctx := context.Background()
	period := 24 * time.Hour
	cfg := generatingConfig(osapi.GeneratedCredentialsConfig{Generation: credentials.Generation{Rotation: &credentials.Rotation{Period: &metav1.Duration{Duration: period}, GracePeriod: &metav1.Duration{Duration: time.Hour}}}, Roles: []string{"member"}})
	s, iss := issuing(t, cloud.SecretData("demo"), cfg)
	bucket := newContainerName()
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: bucket, Region: "RegionOne"}); err != nil {
		t.Fatal(err)
	}
	cred, err := iss.IssueCredential(ctx, bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range cred.Data {
		if k == "password" || string(v) == "demopass" {
			t.Fatalf("the generated secret carries the operator's password (key %q)", k)
		}
	}
	idc, user := keystone(t)
	ac, err := applicationcredentials.Get(ctx, idc, user, cred.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if ac.Unrestricted {
		t.Error("the credential may create further credentials")
	}
	if len(ac.Roles) != 1 || ac.Roles[0].Name != "member" {
		t.Errorf("roles %v; want only member", ac.Roles)
	}
	want := time.Now().Add(2*period + time.Hour)
	if ac.ExpiresAt.IsZero() || ac.ExpiresAt.Sub(want).Abs() > 5*time.Minute {
		t.Errorf("expires at %v; want about %v (two periods and the grace period)", ac.ExpiresAt, want)
	}
	if len(ac.AccessRules) == 0 {
		t.Fatal("the credential has no access rules")
	}
	for _, r := range ac.AccessRules {
		if r.Service != "object-store" || !strings.Contains(r.Path, "/"+bucket) || (r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPut && r.Method != http.MethodDelete) {
			t.Errorf("access rule %+v reaches beyond reading and writing container %s", r, bucket)
		}
	}
	// Revoking everything leaves no access rule of the container behind in Keystone.
	if err := iss.RevokeCredentials(ctx, bucket, nil); err != nil {
		t.Fatal(err)
	}
	pages, err := applicationcredentials.ListAccessRules(idc, user).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := applicationcredentials.ExtractAccessRules(pages)
	for _, r := range rules {
		if strings.Contains(r.Path, "/"+bucket) {
			t.Fatalf("access rule %+v outlived the bucket's credentials", r)
		}
	}
}

func TestRefusedCredentialIsNeverHandedOut(t *testing.T) {
	// Region NoAccessRules reaches Swift through a proxy that cannot check access rules.
	ctx := context.Background()
	data := with(cloud.SecretData("demo"), "region", "NoAccessRules")
	s, iss := issuing(t, data, generatingConfig(osapi.GeneratedCredentialsConfig{}))
	bucket := newContainerName()
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: bucket, Region: "NoAccessRules"}); err != nil {
		t.Fatal(err)
	}
	_, err := iss.IssueCredential(ctx, bucket, nil)
	if !errors.Is(err, objectstore.ErrUnsupported) || errors.Is(err, objectstore.ErrUnauthenticated) || !strings.Contains(err.Error(), "accessRules: false") {
		t.Fatalf("got %v; want ErrUnsupported (only) naming generatedCredentials.accessRules", err)
	}
	idc, user := keystone(t)
	pages, err := applicationcredentials.List(idc, user, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := applicationcredentials.ExtractApplicationCredentials(pages)
	for _, ac := range all {
		if strings.Contains(ac.Name, bucket) {
			t.Fatalf("the refused credential %s was left in Keystone", ac.ID)
		}
	}
	// Without access rules, the same cloud takes the (project-wide) credential.
	noRules := false
	_, iss = issuing(t, data, generatingConfig(osapi.GeneratedCredentialsConfig{AccessRules: &noRules}))
	cred, err := iss.IssueCredential(ctx, bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := newStore(t, cred.Data).PutObject(ctx, bucket, "shoot--a--b--1/x", []byte("x")); err != nil {
		t.Fatalf("a project-wide credential: %v", err)
	}
	if err := iss.RevokeCredentials(ctx, bucket, nil); err != nil {
		t.Fatal(err)
	}
}

func TestApplicationCredentialNamesKeepBucketsApart(t *testing.T) {
	// Bucket "b" never claims "b-1"'s credentials, whose names start the same.
	ctx := context.Background()
	_, iss := issuing(t, cloud.SecretData("demo"), generatingConfig(osapi.GeneratedCredentialsConfig{AccessRules: new(bool)}))
	b := newContainerName()
	long, err := iss.IssueCredential(ctx, b+"-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := iss.RevokeCredentials(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	idc, user := keystone(t)
	if _, err := applicationcredentials.Get(ctx, idc, user, long.ID).Extract(); err != nil {
		t.Fatalf("revoking bucket %q's credentials removed %q's: %v", b, b+"-1", err)
	}
	if err := iss.RevokeCredentials(ctx, b+"-1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := applicationcredentials.Get(ctx, idc, user, long.ID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Fatalf("after revocation: %v; want 404", err)
	}
}

// Roles Keystone will not put on an application credential (an unknown role: 404; a role the
// user does not hold on the project: 400) are a configuration problem naming the field; no
// credential is left behind and no container is touched.
func TestGeneratedCredentialsWithRolesKeystoneRefuses(t *testing.T) {
	ctx := context.Background()
	for _, roles := range [][]string{{"no-such-role"}, {"admin"}} {
		t.Run(roles[0], func(t *testing.T) {
			_, iss := issuing(t, cloud.SecretData("demo"), generatingConfig(osapi.GeneratedCredentialsConfig{Roles: roles}))
			bucket := newContainerName()
			before := accountContainers(t)
			_, err := iss.IssueCredential(ctx, bucket, nil)
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "spec.providerConfig.generatedCredentials.roles") || !strings.Contains(err.Error(), roles[0]) {
				t.Fatalf("got %v; want ErrInvalidConfig naming spec.providerConfig.generatedCredentials.roles and %q", err, roles[0])
			}
			if strings.Contains(err.Error(), "demopass") {
				t.Fatalf("the message reveals the password: %v", err)
			}
			idc, user := keystone(t)
			pages, err := applicationcredentials.List(idc, user, nil).AllPages(ctx)
			if err != nil {
				t.Fatal(err)
			}
			all, err := applicationcredentials.ExtractApplicationCredentials(pages)
			if err != nil {
				t.Fatal(err)
			}
			for _, ac := range all {
				if strings.HasPrefix(ac.Name, osprovider.AppCredName(bucket, time.Time{})[:len("gardener-backup-")+len(bucket)]) {
					t.Fatalf("an application credential of the bucket was left: %s", ac.Name)
				}
			}
			if after := accountContainers(t); !slices.Equal(before, after) {
				t.Fatalf("the account's containers changed: before %v, after %v", before, after)
			}
		})
	}
}
