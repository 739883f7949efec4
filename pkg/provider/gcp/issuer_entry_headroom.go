// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/api/googleapi"
	iam "google.golang.org/api/iam/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const (
	// serviceAccountsQuotaID is the Cloud Quotas API's ID of GCP's limit of service accounts per
	// project, of service iam.googleapis.com (named so by GCP's recommender documentation,
	// https://cloud.google.com/recommender/docs/service-limit-quota-recommender).
	serviceAccountsQuotaID = "ServiceAccountsPerProject"
	// quotasEndpoint is the Cloud Quotas API; google.golang.org/api v0.307.0 has no Go client of
	// it (no cloudquotas package), so its one read is a plain GET on the authorized client.
	quotasEndpoint = "https://cloudquotas.googleapis.com/"
	// listPageSize is the IAM API's largest page of service accounts.
	listPageSize = 100
)

// Headroom implements objectstore.EntryCredentialIssuer: Used is every service account of the
// project (projects.serviceAccounts.list, in pages: the operator's, other tools', every bucket's
// entries), which is what CreateServiceAccount's limit counts; Limit is the quota
// ServiceAccountsPerProject as the Cloud Quotas API reports it for the project (QuotaInfo,
// projects.locations.services.quotaInfos.get). The operator's credentials need
// iam.serviceAccounts.list and cloudquotas.quotas.get. A quota GCP does not report as one
// number (none, or unlimited: -1) is an error, never a guessed 100.
func (s *entryIssuer) Headroom(ctx context.Context) (objectstore.Headroom, error) {
	used := 0
	err := s.iam.Projects.ServiceAccounts.List("projects/"+s.projectID).PageSize(listPageSize).Pages(ctx, func(page *iam.ListServiceAccountsResponse) error {
		used += len(page.Accounts)
		return nil
	})
	if err != nil {
		return objectstore.Headroom{}, iamError("listing the service accounts of project "+s.projectID+" (iam.serviceAccounts.list)", err)
	}
	limit, err := s.serviceAccountsQuota(ctx)
	if err != nil {
		return objectstore.Headroom{}, err
	}
	return objectstore.Headroom{Used: used, Limit: limit, Principals: "service accounts of the project"}, nil
}

// quotaInfo is the part of the Cloud Quotas API's QuotaInfo the issuer reads: the value in
// effect per combination of dimensions (an int64, which proto's JSON writes as a string).
type quotaInfo struct {
	DimensionsInfos []struct {
		Dimensions map[string]string `json:"dimensions"`
		Details    struct {
			Value json.RawMessage `json:"value"`
		} `json:"details"`
	} `json:"dimensionsInfos"`
}

// serviceAccountsQuota reads the project's quota of service accounts: the value of the
// QuotaInfo's dimensions info without dimensions (the quota is per project only).
func (s *entryIssuer) serviceAccountsQuota(ctx context.Context) (int, error) {
	name := "projects/" + s.projectID + "/locations/global/services/iam.googleapis.com/quotaInfos/" + serviceAccountsQuotaID
	what := "reading the quota " + serviceAccountsQuotaID + " of project " + s.projectID + " (Cloud Quotas API, cloudquotas.quotas.get)"
	endpoint := quotasEndpoint
	if s.provider.QuotasEndpoint != "" {
		endpoint = strings.TrimSuffix(s.provider.QuotasEndpoint, "/") + "/"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"v1/"+name, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, classify(err))
	}
	defer func() { _ = resp.Body.Close() }()
	if err := googleapi.CheckResponse(resp); err != nil {
		return 0, iamError(what, err)
	}
	var info quotaInfo
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&info); err != nil {
		return 0, fmt.Errorf("%s: the answer is no QuotaInfo: %w", what, err)
	}
	for _, d := range info.DimensionsInfos {
		if len(d.Dimensions) > 0 {
			continue
		}
		value, err := strconv.ParseInt(strings.Trim(string(d.Details.Value), `"`), 10, 64)
		switch {
		case err != nil:
			return 0, fmt.Errorf("%s: the quota's value %s is no number", what, d.Details.Value)
		case value < 0:
			return 0, fmt.Errorf("%s: GCP reports it as unlimited (%d), while it documents 100 service accounts per project by default: the quota is not read, ask GCP for the project's quota", what, value)
		}
		return int(value), nil
	}
	return 0, fmt.Errorf("%s: the QuotaInfo has no value for the project", what)
}
