// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

func TestCredentialIssuanceRegeneratesTheKeyNotInUse(t *testing.T) {
	arm := startARM(t)
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	name := newBucketName()
	account := azureprovider.AccountName(name)
	if err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
		t.Fatal(err)
	}
	issuer := armIssuer(t, arm, arm.ServicePrincipal())
	regenerated := func() []string {
		var keys []string
		for _, r := range arm.Requests("POST") {
			if strings.HasSuffix(r.Path, "/regeneratekey") {
				keys = append(keys, r.Body)
			}
		}
		return keys
	}
	first, err := issuer.IssueCredential(ctx(t), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != "key1" || string(first.Data["storageKey"]) != arm.Key(account, "key1") || string(first.Data["storageAccount"]) != azurestack.StandInAccount || len(regenerated()) != 0 {
		t.Fatalf("first credential %s (account %s); want key1 of the account as created, nothing regenerated (%v)", first.ID, first.Data["storageAccount"], regenerated())
	}
	second, err := issuer.IssueCredential(ctx(t), name, []string{"key1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := regenerated(); second.ID != "key2" || len(got) != 1 || !strings.Contains(got[0], `"key2"`) || string(second.Data["storageKey"]) != arm.Key(account, "key2") {
		t.Fatalf("rotation issued %s, regenerated %v; want key2 regenerated and published", second.ID, got)
	}
	if _, err := issuer.IssueCredential(ctx(t), name, []string{"key1", "key2"}); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("issuing with both keys in use: %v; want ErrInvalidConfig", err)
	}
	if err := issuer.RevokeCredentials(ctx(t), name, []string{"key2"}); err != nil {
		t.Fatal(err)
	}
	if got := regenerated(); len(got) != 2 || !strings.Contains(got[1], `"key1"`) {
		t.Fatalf("revocation regenerated %v; want key1 (not kept) only", got)
	}
}
