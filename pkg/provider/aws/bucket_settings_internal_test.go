// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

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

// TestMergeTLSStatement: this extension's statement is merged into the policy that is there:
// provider-aws's own statement (no Sid, with its stricter s3:TlsVersion condition, which MinIO
// refuses to store) and an operator's grant are kept as they are, in their order; a policy that
// holds ours as wanted is not written; a statement with our Sid that says something else is
// replaced; a policy that does not parse is never written.
func TestMergeTLSStatement(t *testing.T) {
	incumbents := `{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"],"Condition":{"Bool":{"aws:SecureTransport":"false"},"NumericLessThan":{"s3:TlsVersion":"1.2"}}}`
	operators := `{"Sid":"OperatorAuditRead","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:role/audit"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/reports/*"}`
	ours := `{"Sid":"DenyInsecureTransport","Effect":"Deny","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"],"Condition":{"Bool":{"aws:SecureTransport":"false"}}}`
	oursWeakened := `{"Sid":"DenyInsecureTransport","Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::b/*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}`
	doc := func(statements ...string) string {
		return `{"Version":"2012-10-17","Id":"kept","Statement":[` + strings.Join(statements, ",") + `]}`
	}
	cases := []struct {
		name, current string
		want          []string // the statements after the merge, in order (nil: no write)
		action        objectstore.ChangeAction
	}{
		{name: "no policy", current: "", want: []string{ours}, action: objectstore.ChangeCreate},
		{name: "provider-aws's and an operator's", current: doc(incumbents, operators), want: []string{incumbents, operators, ours}, action: objectstore.ChangeCreate},
		{name: "ours already there", current: doc(incumbents, ours, operators)},
		{name: "ours weakened", current: doc(oursWeakened, operators), want: []string{operators, ours}, action: objectstore.ChangeUpdate},
		{name: "one statement, not a list", current: `{"Version":"2012-10-17","Statement":` + operators + `}`, want: []string{operators, ours}, action: objectstore.ChangeCreate},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			merged, change, err := mergeTLSStatement("b", c.current)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				if change != nil {
					t.Fatalf("change %v; want none", change)
				}
				return
			}
			if change == nil || change.Action != c.action {
				t.Fatalf("change %v; want %s", change, c.action)
			}
			var got struct {
				ID        string `json:"Id"`
				Statement []json.RawMessage
			}
			if err := json.Unmarshal([]byte(merged), &got); err != nil {
				t.Fatal(err)
			}
			if c.current != "" && strings.Contains(c.current, `"Id"`) && got.ID != "kept" {
				t.Errorf("the policy's Id is %q; want it kept", got.ID)
			}
			if len(got.Statement) != len(c.want) {
				t.Fatalf("statements %s; want %v", merged, c.want)
			}
			for i, w := range c.want {
				if !samePolicy(string(got.Statement[i]), w) {
					t.Errorf("statement %d is %s; want %s", i, got.Statement[i], w)
				}
			}
		})
	}
	if _, _, err := mergeTLSStatement("b", "{"); err == nil {
		t.Fatal("a policy that does not parse was merged")
	}
}
