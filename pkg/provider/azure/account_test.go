// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
)

// TestAccountNotOursIsNeverReadEmptiedRekeyedOrDeleted puts a storage account with the bucket's
// account name into the bucket's resource group that this extension did not create, with a
// container of the bucket's name holding a blob, and drives every operation at it: each is an
// ownership error, and no request that reads its keys, regenerates them, or writes or deletes
// anything reaches the management plane; the blob is still there.
func TestAccountNotOursIsNeverReadEmptiedRekeyedOrDeleted(t *testing.T) {
	cases := []struct {
		name string
		tags func(bucket string) map[string]string
	}{
		{"untagged", func(string) map[string]string { return nil }},
		{"tagged for another bucket", func(string) map[string]string {
			return map[string]string{azureprovider.TagBucket: "other", azureprovider.TagManagedBy: "gardener-extension-backup"}
		}},
		{"bucket tag without managed-by", func(b string) map[string]string { return map[string]string{azureprovider.TagBucket: b} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			arm := startARM(t)
			s := armStore(t, arm, arm.ServicePrincipal(), false)
			name := newBucketName()
			account := azureprovider.AccountName(name)
			arm.PutGroup(name, "westeurope", nil)
			arm.PutAccount(name, account, "westeurope", c.tags(name))
			blobs := standInBlobs(t)
			if _, err := blobs.CreateContainer(ctx(t), name, nil); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = blobs.DeleteContainer(context.Background(), name, nil) })
			if _, err := blobs.UploadBuffer(ctx(t), name, "shoot--a--b--1/theirs", []byte("not ours"), nil); err != nil {
				t.Fatal(err)
			}

			issuer := armIssuer(t, arm, arm.ServicePrincipal())
			prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
			ops := map[string]func() error{
				"EnsureBucket": func() error { return s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}) },
				"ListObjects": func() error {
					return s.ListObjects(ctx(t), name, "", func([]objectstore.ObjectVersion) error { return nil })
				},
				"DeletePrefix(entry)": func() error {
					_, err := objectstore.DeletePrefix(ctx(t), s, name, prefix, objectstore.DeleteOptions{})
					return err
				},
				"DeletePrefix(bucket)": func() error {
					_, err := objectstore.DeletePrefix(ctx(t), s, name, objectstore.WholeBucket(), objectstore.DeleteOptions{})
					return err
				},
				"DeleteBucket": func() error { return s.DeleteBucket(ctx(t), name) },
				"DeferDeletion": func() error {
					_, err := s.DeferDeletion(ctx(t), name, prefix.String())
					return err
				},
				"IssueCredential(first)": func() error {
					_, err := issuer.IssueCredential(ctx(t), name, nil)
					return err
				},
				"IssueCredential(rotation)": func() error {
					_, err := issuer.IssueCredential(ctx(t), name, []string{"key1"})
					return err
				},
				"RevokeCredentials": func() error { return issuer.RevokeCredentials(ctx(t), name, nil) },
				"PutObject":         func() error { return s.PutObject(ctx(t), name, "shoot--a--b--1/ours", []byte("x")) },
			}
			for op, fn := range ops {
				if err := fn(); !errors.Is(err, objectstore.ErrOwnedByOther) || !strings.Contains(err.Error(), account) {
					t.Errorf("%s: %v; want ErrOwnedByOther naming account %s", op, err, account)
				}
			}
			for _, r := range arm.Requests() {
				if !strings.Contains(r.Path, "/storageaccounts/"+account) {
					continue
				}
				if r.Method != http.MethodGet {
					t.Errorf("a request acted on the account that is not ours: %s %s", r.Method, r.Path)
				}
			}
			if arm.Account(account) == nil || arm.Group(name) == nil {
				t.Fatal("the account that is not ours, or its group, was deleted")
			}
			got, err := blobs.DownloadStream(ctx(t), name, "shoot--a--b--1/theirs", nil)
			if err != nil {
				t.Fatalf("the blob in the account that is not ours is gone: %v", err)
			}
			_ = got.Body.Close()
		})
	}
}

// TestAccountOfOursHoldingAnotherContainerIsNotDeleted: an account the extension created, into
// which somebody put a container of their own, loses only the bucket's (empty) container; the
// account, the other container and the resource group stay, and the deletion says why.
func TestAccountOfOursHoldingAnotherContainerIsNotDeleted(t *testing.T) {
	arm := startARM(t)
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	name := newBucketName()
	account := azureprovider.AccountName(name)
	if err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
		t.Fatal(err)
	}
	arm.PutContainer(account, "someone-elses")
	err := s.DeleteBucket(ctx(t), name)
	if !errors.Is(err, objectstore.ErrOwnedByOther) || !strings.Contains(err.Error(), "someone-elses") || !strings.Contains(err.Error(), account) {
		t.Fatalf("DeleteBucket of an account holding another container: %v; want ErrOwnedByOther naming the account and the container", err)
	}
	if arm.Account(account) == nil || arm.Container(account, "someone-elses") == nil || arm.Group(name) == nil {
		t.Fatal("the account, the other container or the resource group was deleted")
	}
	if arm.Container(account, name) != nil {
		t.Error("the bucket's own empty container was left")
	}
	for _, r := range arm.Requests("DELETE") {
		if strings.HasSuffix(r.Path, "/storageaccounts/"+account) || strings.HasSuffix(r.Path, "/resourcegroups/"+name) {
			t.Errorf("deleted while another container lives in the account: %s", r.Path)
		}
	}
	// Once the other container is gone, the account and the group go too.
	arm.DropContainer(account, "someone-elses")
	if err := s.DeleteBucket(ctx(t), name); err != nil {
		t.Fatal(err)
	}
	if arm.Account(account) != nil || arm.Group(name) != nil {
		t.Fatal("the account or the group is left after the other container went")
	}
}

func TestAccountIsCreatedHardenedAndConverged(t *testing.T) {
	arm := startARM(t)
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	name := newBucketName()
	b := objectstore.Bucket{Name: name, Region: "westeurope"}
	if err := s.EnsureBucket(ctx(t), b); err != nil {
		t.Fatal(err)
	}
	acct := arm.Account(azureprovider.AccountName(name))
	props := acct["properties"].(map[string]any)
	want := map[string]any{"supportsHttpsTrafficOnly": true, "minimumTlsVersion": "TLS1_2", "allowBlobPublicAccess": false}
	for k, v := range want {
		if props[k] != v {
			t.Errorf("account property %s = %v; want %v", k, props[k], v)
		}
	}
	if acct["kind"] != "StorageV2" || acct["sku"].(map[string]any)["name"] != "Standard_ZRS" || acct["location"] != "westeurope" {
		t.Errorf("account kind %v, sku %v, location %v; want StorageV2, Standard_ZRS, westeurope", acct["kind"], acct["sku"], acct["location"])
	}
	if tags := acct["tags"].(map[string]any); tags[azureprovider.TagBucket] != name {
		t.Errorf("account tags %v; want %s=%s", tags, azureprovider.TagBucket, name)
	}
	if g := arm.Group(name); g == nil || g["tags"].(map[string]any)[azureprovider.TagBucket] != name {
		t.Errorf("resource group %v; want one tagged with the bucket", g)
	}
	rules := arm.Lifecycle(azureprovider.AccountName(name))["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any)
	if len(rules) != 1 || rules[0].(map[string]any)["name"] != azureprovider.DeferredDeletionRule {
		t.Errorf("lifecycle rules %v; want the deferred-deletion rule", rules)
	}

	writes := arm.Writes()
	if err := s.EnsureBucket(ctx(t), b); err != nil {
		t.Fatal(err)
	}
	if got := arm.Writes(); got != writes {
		t.Fatalf("a converged bucket got %d writes; want none: %v", got-writes, arm.Requests("PUT", "PATCH", "DELETE")[writes:])
	}

	arm.SetAccount(azureprovider.AccountName(name), func(a map[string]any) {
		p := a["properties"].(map[string]any)
		p["allowBlobPublicAccess"], p["minimumTlsVersion"], p["supportsHttpsTrafficOnly"] = true, "TLS1_0", false
	})
	if err := s.EnsureBucket(ctx(t), b); err != nil {
		t.Fatal(err)
	}
	props = arm.Account(azureprovider.AccountName(name))["properties"].(map[string]any)
	for k, v := range want {
		if props[k] != v {
			t.Errorf("after drift: account property %s = %v; want %v", k, props[k], v)
		}
	}
	if err := s.DeleteBucket(ctx(t), name); err != nil {
		t.Fatal(err)
	}
	if arm.Account(azureprovider.AccountName(name)) != nil || arm.Group(name) != nil {
		t.Fatal("the account or resource group the extension created is left after DeleteBucket")
	}
}

func TestAccountNotTaggedForTheBucketIsNotTouched(t *testing.T) {
	arm := startARM(t)
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	name := newBucketName()
	if err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
		t.Fatal(err)
	}
	// The same account name in the bucket's own group, but tagged for another bucket.
	arm.SetAccount(azureprovider.AccountName(name), func(a map[string]any) { a["tags"] = map[string]any{azureprovider.TagBucket: "other"} })
	before := len(arm.Requests("PUT", "PATCH", "DELETE"))
	err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"})
	if !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("EnsureBucket: %v; want ErrOwnedByOther", err)
	}
	if err := s.DeleteBucket(ctx(t), name); !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("DeleteBucket: %v; want ErrOwnedByOther", err)
	}
	if arm.Account(azureprovider.AccountName(name)) == nil {
		t.Fatal("DeleteBucket deleted an account not tagged for the bucket")
	}
	for _, r := range arm.Requests("PUT", "PATCH", "DELETE")[before:] {
		t.Errorf("changed something while the account is not the bucket's: %s %s", r.Method, r.Path)
	}
}
