// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"fmt"
	"net/http"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/auth/credentials/externalaccount"
	"cloud.google.com/go/auth/httptransport"
	"cloud.google.com/go/storage"
	"google.golang.org/api/option"
	rawstorage "google.golang.org/api/storage/v1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// OAuth scopes: storage (bucket administration included), or the whole platform when the store
// also issues service-account keys through the IAM API.
const (
	storageScope       = "https://www.googleapis.com/auth/devstorage.full_control"
	cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"
)

// NewClient builds the storage client a store uses and returns the project it works in (the
// benchmarks build their baselines with it, so that strategies differ in nothing but strategy).
// Only the secret is consulted: no environment, metadata server or well-known file.
func (p *Provider) NewClient(ctx context.Context, creds provider.Credentials) (*storage.Client, string, error) {
	httpClient, projectID, err := p.authorizedClient(creds, storageScope)
	if err != nil {
		return nil, "", err
	}
	client, err := newStorageClient(ctx, httpClient, creds.Data)
	return client, projectID, err
}

// authorizedClient is an HTTP client that authenticates with the secret's credentials for scope,
// and the project the credentials belong to.
func (p *Provider) authorizedClient(creds provider.Credentials, scope string) (*http.Client, string, error) {
	timeout := httpclient.Timeout(p.RequestTimeout)
	// Every request (storage, IAM and token exchanges) is counted by the metrics transport,
	// which sits under refusedTokens so that it counts the token endpoint's own status. The
	// deletion engine keeps many requests in flight to one host.
	base, err := httpclient.RoundTripper(httpclient.Options{Provider: Type, MaxIdleConnsPerHost: 256, StallTimeout: timeout})
	if err != nil {
		return nil, "", err
	}
	if err := credentialMode(creds.Data, creds.WorkloadIdentity); err != nil {
		return nil, "", err
	}
	var (
		authCreds *auth.Credentials
		projectID string
	)
	if creds.WorkloadIdentity {
		tokenClient := &http.Client{Transport: refusedTokens{base, fmt.Sprintf("secret keys %q and %q (workload identity)", KeyToken, KeyConfig)}, Timeout: timeout}
		authCreds, projectID, err = workloadIdentityCredentials(creds.Data, tokenClient, scope)
	} else {
		tokenClient := &http.Client{Transport: refusedTokens{base, fmt.Sprintf("secret key %q", KeyServiceAccountJSON)}, Timeout: timeout}
		authCreds, projectID, err = serviceAccountCredentials(creds.Data[KeyServiceAccountJSON], tokenClient, scope)
	}
	if err != nil {
		return nil, "", err
	}
	httpClient, err := httptransport.NewClient(&httptransport.Options{Credentials: authCreds, BaseRoundTripper: base})
	if err != nil {
		return nil, "", objectstore.Invalidf("building the HTTP client: %v", err)
	}
	return httpClient, projectID, nil
}

// newStorageClient is the storage client on an authorized HTTP client, at the secret's endpoint.
func newStorageClient(ctx context.Context, httpClient *http.Client, data map[string][]byte) (*storage.Client, error) {
	endpoint, err := storageEndpoint(data[KeyStorageAPIEndpoint])
	if err != nil {
		return nil, err
	}
	opts := []option.ClientOption{option.WithHTTPClient(httpClient), storage.WithJSONReads()}
	if endpoint != "" {
		opts = append(opts, option.WithEndpoint(endpoint))
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, objectstore.Invalidf("building the storage client: %v", err)
	}
	// The SDK retries idempotent requests on 429, 5xx and transport errors with back-off; a few
	// attempts, then the deletion engine (which slows down) and the controllers (which requeue)
	// take over, so that one throttled object does not hold a whole reconcile.
	client.SetRetry(storage.WithMaxAttempts(4))
	return client, nil
}

// newRawService is the JSON API on an authorized HTTP client, at the secret's endpoint.
func newRawService(ctx context.Context, httpClient *http.Client, data map[string][]byte) (*rawstorage.Service, error) {
	endpoint, err := storageEndpoint(data[KeyStorageAPIEndpoint])
	if err != nil {
		return nil, err
	}
	opts := []option.ClientOption{option.WithHTTPClient(httpClient)}
	if endpoint != "" {
		opts = append(opts, option.WithEndpoint(endpoint))
	}
	svc, err := rawstorage.NewService(ctx, opts...)
	if err != nil {
		return nil, objectstore.Invalidf("building the storage JSON API client: %v", err)
	}
	return svc, nil
}

func serviceAccountCredentials(raw []byte, client *http.Client, scope string) (*auth.Credentials, string, error) {
	sa, err := parseServiceAccount(raw)
	if err != nil {
		return nil, "", err
	}
	c, err := credentials.NewCredentialsFromJSON(credentials.ServiceAccount, raw, &credentials.DetectOptions{Scopes: []string{scope}, Client: client})
	if err != nil {
		return nil, "", objectstore.Invalidf("secret key %q: %v", KeyServiceAccountJSON, err)
	}
	return c, sa.ProjectID, nil
}

func workloadIdentityCredentials(data map[string][]byte, client *http.Client, scope string) (*auth.Credentials, string, error) {
	cfg, ea, err := gcpapi.DecodeWorkloadIdentityConfig(data[KeyConfig])
	if err != nil {
		return nil, "", err
	}
	token := data[KeyToken]
	if len(token) == 0 {
		return nil, "", fmt.Errorf("%w: workload identity secret has no %q yet", objectstore.ErrUnauthenticated, KeyToken)
	}
	c, err := externalaccount.NewCredentials(&externalaccount.Options{
		Audience:                       ea.Audience,
		SubjectTokenType:               ea.SubjectTokenType,
		TokenURL:                       ea.TokenURL,
		ServiceAccountImpersonationURL: ea.ServiceAccountImpersonationURL,
		UniverseDomain:                 ea.UniverseDomain,
		Scopes:                         []string{scope},
		SubjectTokenProvider:           staticToken(token),
		Client:                         client,
	})
	if err != nil {
		return nil, "", objectstore.Invalidf("config.credentialsConfig: %v", err)
	}
	return c, cfg.ProjectID, nil
}

// staticToken hands the secret's workload identity token to the token exchange.
type staticToken []byte

func (t staticToken) SubjectToken(context.Context, *externalaccount.RequestOptions) (string, error) {
	return string(t), nil
}
