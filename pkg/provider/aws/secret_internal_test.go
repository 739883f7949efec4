package aws

import "testing"

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
