// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/gophercloud/gophercloud/v2"
	gopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// httpClient is the client of Keystone's and Swift's requests alike: the secret's CA bundle or
// insecure, the request timeout, the metrics transport.
func (p *Provider) httpClient(c credentials) (http.Client, error) {
	timeout := httpclient.Timeout(p.RequestTimeout)
	// No timeout on the whole exchange: a bulk delete answers at once and then streams its result
	// while Swift works through the names (minutes for thousands, a space every few seconds
	// meanwhile), and a large object's GET flows as long as it takes. The caller's context
	// bounds it; each wait on the store is bounded by the timeout (StallTimeout). Keystone's and
	// Swift's requests alike are counted by the metrics transport.
	transport, err := httpclient.RoundTripper(httpclient.Options{
		Provider: Type, CA: string(c.caCert), CAKey: KeyCACert, InsecureSkipVerify: c.insecure,
		MaxIdleConnsPerHost: 64, StallTimeout: timeout, TLSHandshakeTimeout: timeout,
	})
	if err != nil {
		return http.Client{}, err
	}
	return http.Client{Transport: transport}, nil
}

// swift returns the object-storage client, authenticating with Keystone once.
func (s *store) swift(ctx context.Context) (*gophercloud.ServiceClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil {
		return s.client, nil
	}
	pc, err := gopenstack.NewClient(s.creds.auth.IdentityEndpoint)
	if err != nil {
		return nil, objectstore.Invalidf("secret key %q: %w", KeyAuthURL, err)
	}
	pc.HTTPClient = s.httpClient
	if err := gopenstack.Authenticate(ctx, pc, s.creds.auth); err != nil {
		err = classifyAuthentication(err)
		if errors.Is(err, objectstore.ErrUnauthenticated) {
			return nil, fmt.Errorf("authenticating with Keystone: it refused the credentials of the secret keys %s: %w", s.creds.keys, err)
		}
		return nil, fmt.Errorf("authenticating with Keystone: %w", err)
	}
	if result, ok := pc.GetAuthResult().(tokens.CreateResult); ok {
		if user, err := result.ExtractUser(); err == nil {
			s.userID = user.ID
		}
	}
	s.session = pc
	client, err := gopenstack.NewObjectStorageV1(pc, gophercloud.EndpointOpts{Region: s.creds.region})
	if err != nil {
		var notFound *gophercloud.ErrEndpointNotFound
		if errors.As(err, &notFound) {
			return nil, objectstore.Invalidf("Keystone lists no object-store endpoint in region %q (%s)", s.creds.region, s.creds.regionSource)
		}
		return nil, err
	}
	if s.rewrite != nil {
		client.Endpoint = s.rewrite(client.Endpoint)
		client.ResourceBase = ""
	}
	s.bulkLimit = s.discoverBulkLimit(ctx, client)
	s.client = client
	return client, nil
}

// discoverBulkLimit reads the cluster's advertised bulk-delete limit from /info; 0 means the
// bulk middleware is not there (or /info is disabled), so objects are deleted one by one.
func (s *store) discoverBulkLimit(ctx context.Context, client *gophercloud.ServiceClient) int {
	u, err := url.Parse(client.Endpoint)
	if err != nil {
		return 0
	}
	u.Path, u.RawQuery = "/info", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0
	}
	resp, err := s.httpClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0
	}
	var info struct {
		BulkDelete *struct {
			MaxDeletesPerRequest int `json:"max_deletes_per_request"`
		} `json:"bulk_delete"`
		Swift            *json.RawMessage `json:"swift"`
		ObjectVersioning *json.RawMessage `json:"object_versioning"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&info); err != nil {
		return 0
	}
	// Only an /info that is Swift's (it always has "swift") tells that versioning is missing.
	s.noObjectVersioning = info.Swift != nil && info.ObjectVersioning == nil
	if info.BulkDelete == nil {
		return 0
	}
	if info.BulkDelete.MaxDeletesPerRequest <= 0 {
		return defaultMaxDeletes
	}
	return info.BulkDelete.MaxDeletesPerRequest
}
