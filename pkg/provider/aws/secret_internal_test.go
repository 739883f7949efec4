// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"maps"
	"slices"
	"testing"
)

// Regions the S3 SDK accepts pass; others are refused before it refuses them without a code.
func TestValidateRegion(t *testing.T) {
	for _, r := range []string{"eu-central-1", "us-east-1", "default", "RegionOne", "garage", "eu.west.1"} {
		if err := validateRegion(r, true); err != nil {
			t.Errorf("%q refused: %v", r, err)
		}
	}
	for _, r := range []string{"eu-central-1\n", " eu-central-1", "eu central 1", "eu_central_1", "eu..x", ".", "-eu", "eu-", "a/b"} {
		if err := validateRegion(r, false); err == nil {
			t.Errorf("%q accepted", r)
		}
	}
}

// A generated credential keeps how to reach and use the store, the customer key among it (shoots
// given the generated secret would otherwise write unencrypted snapshots and could not read the
// encrypted ones), and none of the operator's own credentials.
func TestCredentialTemplateKeepsTheStoreKeys(t *testing.T) {
	operator := map[string][]byte{}
	for _, k := range []string{KeyAccessKeyID, KeySecretAccessKey, KeyRoleARN, KeyToken, KeyConfig, KeyBucketName, "stray"} {
		operator[k] = []byte("operator's " + k)
	}
	for _, k := range storeKeys {
		operator[k] = []byte("value of " + k)
	}
	got := credentialTemplate(operator)
	want := []string{KeyRegion, KeyEndpoint, KeyS3ForcePathStyle, KeyTrustedCACert, KeyInsecureSkipVerify,
		KeySSECustomerKey, KeySSECustomerAlgorithm, KeyRequestChecksumCalculation, KeyResponseChecksumValidation}
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, slices.Sorted(slices.Values(want))) {
		t.Fatalf("the template keeps %v; want exactly %v", keys, want)
	}
	for k, v := range got {
		if string(v) != "value of "+k {
			t.Errorf("%q changed", k)
		}
	}
}
