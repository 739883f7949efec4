// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	gopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

// swiftRaw sends raw Swift requests with one client's token, so that each escape below is the
// exact request a holder of the credential would send.
type swiftRaw struct {
	t        *testing.T
	token    string
	endpoint string // the account URL, ending in "/"
}

func (s swiftRaw) do(method, path string, headers map[string]string, body string) (int, string) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.endpoint+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", s.token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func rawClient(t *testing.T, sc *gophercloud.ServiceClient) swiftRaw {
	t.Helper()
	return swiftRaw{t: t, token: sc.Token(), endpoint: gophercloud.NormalizeURL(sc.Endpoint)}
}

// issuedSwift is a Swift client authenticated with a credential the issuer issued.
func issuedSwift(t *testing.T, cred objectstore.Credential) *gophercloud.ServiceClient {
	t.Helper()
	ctx := context.Background()
	pc, err := gopenstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: cloud.AuthURL,
		ApplicationCredentialID:     string(cred.Data[osprovider.KeyApplicationCredentialID]),
		ApplicationCredentialSecret: string(cred.Data[osprovider.KeyApplicationCredentialSecret])})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := gopenstack.NewObjectStorageV1(pc, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func refused(code int) bool { return code == http.StatusUnauthorized || code == http.StatusForbidden }
func ok(code int) bool      { return code >= 200 && code < 300 }

// Finding 10: what a generated credential with access rules for container "ours" reaches, run
// against the real Keystone and Swift with what the issuer issues, each outcome as
// CredentialReach and docs/generated-credentials.md state it: direct requests elsewhere are
// refused; reads and deletes through Swift's sub-requests (copy, symlink, DLO, SLO) reach every
// container of the project's account; writes into another container and other projects are
// refused.
func TestGeneratedCredentialReach(t *testing.T) {
	ctx := context.Background()
	_, iss := issuing(t, cloud.SecretData("demo"), generatingConfig(osapi.GeneratedCredentialsConfig{}))
	store := newStore(t, cloud.SecretData("demo"))
	ours, other := newContainerName(), newContainerName()
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: ours, Region: "RegionOne"}); err != nil {
		t.Fatal(err)
	}
	operator := rawClient(t, swiftAs(t, "demo"))
	if _, err := containers.Create(ctx, swiftAs(t, "demo"), other, nil).Extract(); err != nil {
		t.Fatal(err)
	}
	const secret = "the other container's data"
	seed := func(key string) {
		if code, body := operator.do(http.MethodPut, other+"/"+key, nil, secret); !ok(code) {
			t.Fatalf("PUT %s/%s: %d %s", other, key, code, body)
		}
	}
	for _, k := range []string{"read", "dlo/1", "slo-segment", "written"} {
		seed(k)
	}
	// The other project's account, which the demo user has no role on.
	otherAccount := rawClient(t, swiftAs(t, "other"))
	if _, err := containers.Create(ctx, swiftAs(t, "other"), other, nil).Extract(); err != nil {
		t.Fatal(err)
	}
	if code, body := otherAccount.do(http.MethodPut, other+"/read", nil, secret); !ok(code) {
		t.Fatalf("PUT in project other: %d %s", code, body)
	}
	otherAccountName := strings.TrimSuffix(otherAccount.endpoint[strings.LastIndex(strings.TrimSuffix(otherAccount.endpoint, "/"), "/")+1:], "/")

	cred, err := iss.IssueCredential(ctx, ours, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = iss.RevokeCredentials(context.Background(), ours, nil) })
	holder := rawClient(t, issuedSwift(t, cred))

	if code, _ := holder.do(http.MethodPut, ours+"/own", nil, "x"); !ok(code) {
		t.Fatalf("the credential cannot write its own container: %d", code)
	}
	// Refused: direct requests outside the container.
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, other + "/read"},
		{http.MethodGet, other},
		{http.MethodPut, other + "/new"},
		{http.MethodDelete, other + "/read"},
		{http.MethodPost, ours},
		{http.MethodHead, ""},
	} {
		if code, _ := holder.do(r.method, r.path, nil, ""); !refused(code) {
			t.Errorf("%s /%s: %d; want refused", r.method, r.path, code)
		}
	}
	// Refused: COPY (a method the rules do not name) into another container.
	if code, _ := holder.do("COPY", ours+"/own", map[string]string{"Destination": other + "/copied"}, ""); !refused(code) {
		t.Errorf("COPY into %s: %d; want refused", other, code)
	}
	// Refused: another project's account, through a sub-request (the user has no role there).
	if code, _ := holder.do(http.MethodPut, ours+"/from-other-project", map[string]string{"X-Copy-From": other + "/read", "X-Copy-From-Account": otherAccountName}, ""); !refused(code) {
		t.Errorf("copy from project other's account: %d; want refused", code)
	}

	// Possible, and documented: reads through server-side copy, a symlink and a DLO manifest.
	reads := []struct {
		name    string
		headers map[string]string
		key     string
	}{
		{"copy (X-Copy-From)", map[string]string{"X-Copy-From": other + "/read"}, "copy"},
		{"symlink", map[string]string{"X-Symlink-Target": other + "/read"}, "link"},
		{"dynamic large object", map[string]string{"X-Object-Manifest": other + "/dlo/"}, "dlo"},
	}
	for _, r := range reads {
		if code, body := holder.do(http.MethodPut, ours+"/"+r.key, r.headers, ""); !ok(code) {
			t.Errorf("%s: PUT %d %s; CredentialReach says it is possible", r.name, code, body)
			continue
		}
		if code, body := holder.do(http.MethodGet, ours+"/"+r.key, nil, ""); !ok(code) || body != secret {
			t.Errorf("%s: GET %d %q; CredentialReach says another container's object can be read", r.name, code, body)
		}
	}
	// Refused: a write through the symlink replaces the link, not the other container's object.
	if code, _ := holder.do(http.MethodPut, ours+"/link", nil, "overwritten"); !ok(code) {
		t.Errorf("PUT onto the symlink: %d", code)
	}
	if code, body := operator.do(http.MethodGet, other+"/read", nil, ""); code != http.StatusOK || body != secret {
		t.Errorf("a write through a symlink changed %s/read: %d %q", other, code, body)
	}
	// Possible, and documented: a static large object manifest naming another container's
	// object as a segment, deleted with multipart-manifest=delete, deletes that object.
	manifest := `[{"path": "/` + other + `/slo-segment"}]`
	if code, body := holder.do(http.MethodPut, ours+"/slo?multipart-manifest=put", nil, manifest); !ok(code) {
		t.Fatalf("SLO manifest PUT: %d %s; CredentialReach says it is possible", code, body)
	}
	if code, body := holder.do(http.MethodDelete, ours+"/slo?multipart-manifest=delete", nil, ""); !ok(code) {
		t.Fatalf("SLO manifest delete: %d %s", code, body)
	}
	if code, _ := operator.do(http.MethodHead, other+"/slo-segment", nil, ""); code != http.StatusNotFound {
		t.Errorf("after the manifest delete %s/slo-segment answers %d; CredentialReach says it is deleted", other, code)
	}

	// The condition's statement names exactly these outcomes.
	reach, hasReach := iss.(interface{ CredentialReach(string) string })
	if !hasReach {
		t.Fatal("the issuer does not say what its credentials reach")
	}
	msg := reach.CredentialReach(ours)
	for _, want := range []string{ours, "X-Copy-From", "symlink", "large object", "read every object", "delete every object", `project "demo"`, "cannot write into"} {
		if !strings.Contains(msg, want) {
			t.Errorf("CredentialReach %q does not say %q", msg, want)
		}
	}
}
