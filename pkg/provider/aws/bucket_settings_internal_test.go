// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import "testing"

func TestSamePolicy(t *testing.T) {
	ours := TLSOnlyPolicy("b")
	cases := []struct {
		name  string
		given string
		same  bool
	}{
		{"ours", ours, true},
		{"as MinIO gives it back", `{"Version":"2012-10-17","Statement":[{"Sid":"DenyInsecureTransport","Effect":"Deny","Principal":{"AWS":["*"]},"Action":["s3:*"],"Resource":["arn:aws:s3:::b/*","arn:aws:s3:::b"],"Condition":{"Bool":{"aws:SecureTransport":["false"]}}}]}`, true},
		{"allows instead", `{"Version":"2012-10-17","Statement":[{"Sid":"DenyInsecureTransport","Effect":"Allow","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"],"Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`, false},
		{"objects only", `{"Version":"2012-10-17","Statement":[{"Sid":"DenyInsecureTransport","Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::b/*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`, false},
		{"a second statement", `{"Version":"2012-10-17","Statement":[{"Sid":"DenyInsecureTransport","Effect":"Deny","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"],"Condition":{"Bool":{"aws:SecureTransport":"false"}}},{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`, false},
		{"not JSON", `{`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := samePolicy(c.given, ours); got != c.same {
				t.Fatalf("samePolicy = %v; want %v", got, c.same)
			}
		})
	}
}
