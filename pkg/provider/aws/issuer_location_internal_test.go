// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Where the issued credentials live: the account the operator's credentials are of (IAM, asked
// of STS), the server (MinIO). The controller compares it with the place recorded at issue before
// every revocation, so it must change exactly when the operator's credentials reach elsewhere.
func TestIssuerLocation(t *testing.T) {
	account := "111111111111"
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.Form.Get("Action") != "GetCallerIdentity" {
			http.Error(w, "unexpected "+r.Form.Get("Action"), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>arn:aws:iam::%[1]s:user/operator</Arn><UserId>AIDAEXAMPLE</UserId><Account>%[1]s</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>`, account)
	}))
	defer sts.Close()
	p := &Provider{STSEndpoint: sts.URL}
	secret := map[string][]byte{KeyAccessKeyID: []byte("id"), KeySecretAccessKey: []byte("secret"), KeyRegion: []byte("eu-central-1")}
	ctx := context.Background()

	iss, err := p.NewIssuer(ctx, provider.Credentials{Data: secret}, nil, awsapi.IssuerIAM)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := iss.Location(ctx); err != nil || got != "aws-account:111111111111" {
		t.Fatalf("IAM Location = %q, %v", got, err)
	}
	account = "222222222222" // the operator's credentials now belong to another account
	if got, err := iss.Location(ctx); err != nil || got != "aws-account:222222222222" {
		t.Fatalf("IAM Location after the account changed = %q, %v", got, err)
	}

	minio := map[string][]byte{KeyAccessKeyID: []byte("id"), KeySecretAccessKey: []byte("secret"), KeyRegion: []byte("r"), KeyEndpoint: []byte("https://minio.example.com:9000")}
	iss, err = p.NewIssuer(ctx, provider.Credentials{Data: minio}, nil, awsapi.IssuerMinIO)
	if err != nil {
		t.Fatal(err)
	}
	got, err := iss.Location(ctx)
	if err != nil || got != "minio:minio.example.com:9000" || strings.Contains(got, "secret") {
		t.Fatalf("MinIO Location = %q, %v", got, err)
	}
}
