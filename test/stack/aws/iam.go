// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/minio/madmin-go/v3"
)

// IAM is a stand-in for the parts of AWS IAM the extension calls for generated credentials
// (users, listed in pages, and their tags, inline user policies, access keys, with IAM's limits of two keys per
// user and 2,048 characters of inline policy, the account's quota of users (SetUsersQuota), which
// CreateUser's LimitExceeded and GetAccountSummary's Users/UsersQuota both read, and its refusal
// to delete a user that still has keys or policies). No emulator of IAM runs here, so
// this plays the Query API over HTTP and records every action; it is not AWS, and the keys it
// issues authenticate nowhere.
type IAM struct {
	*httptest.Server

	mu       sync.Mutex
	users    map[string]*iamUser
	requests []url.Values
	// usersQuota is the account's limit of users (AWS: 5,000, DefaultUsersQuota).
	usersQuota int
	// enforcer, when set, is a MinIO server that mirrors every key with its user's inline
	// policies (EnforceOn).
	enforcer *madmin.AdminClient
	secrets  map[string]string
	// denied are the actions answered AccessDenied (Deny).
	denied map[string]bool
	// lagging are the users whose next ListAccessKeys omits their newest key (LagKeyListingOnce).
	lagging map[string]bool
}

// LagKeyListingOnce makes the next ListAccessKeys of user omit its newest key, as IAM's eventually
// consistent listing can right after CreateAccessKey.
func (s *IAM) LagKeyListingOnce(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lagging == nil {
		s.lagging = map[string]bool{}
	}
	s.lagging[user] = true
}

// Deny makes the stand-in answer actions with AccessDenied, as IAM answers a credential without
// the rights; none allows every action again.
func (s *IAM) Deny(actions ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denied = map[string]bool{}
	for _, a := range actions {
		s.denied[a] = true
	}
}

type iamUser struct {
	policies map[string]string
	keys     []string
	tags     map[string]string
}

// StartIAM starts the stand-in.
func StartIAM() *IAM {
	s := &IAM{users: map[string]*iamUser{}, usersQuota: DefaultUsersQuota}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// DefaultUsersQuota is AWS's quota of IAM users per account
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html).
const DefaultUsersQuota = 5000

// SetUsersQuota sets the account's quota of users: CreateUser with as many users as that answers
// LimitExceeded, and GetAccountSummary reports it as UsersQuota. Raising it is headroom
// returning.
func (s *IAM) SetUsersQuota(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usersQuota = n
}

// EnforceOn makes the stand-in's keys real on m: every access key it issues becomes a MinIO
// user with the same key and secret, whose policy is the union of its IAM user's inline
// policies (kept current), removed with the key. So a policy the extension writes into IAM is
// enforced by MinIO's policy engine, which evaluates the same S3 policy language; it is not AWS,
// whose evaluation can differ in details.
func (s *IAM) EnforceOn(m *MinIO) error {
	admin, err := m.Admin()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.enforcer, s.secrets = admin, map[string]string{}
	return nil
}

// enforce brings the MinIO users of name's keys in line with its policies (the lock is held).
func (s *IAM) enforce(name string) error {
	u := s.users[name]
	if s.enforcer == nil || u == nil {
		return nil
	}
	ctx := context.Background()
	var statements []json.RawMessage
	for _, doc := range u.policies {
		var d struct{ Statement []json.RawMessage }
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			return err
		}
		statements = append(statements, d.Statement...)
	}
	policy := "iam-" + name
	if len(statements) > 0 {
		doc, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": statements})
		if err := s.enforcer.AddCannedPolicy(ctx, policy, doc); err != nil {
			return err
		}
	}
	for _, k := range u.keys {
		if err := s.enforcer.AddUser(ctx, k, s.secrets[k]); err != nil {
			return err
		}
		if len(statements) > 0 {
			if _, err := s.enforcer.AttachPolicy(ctx, madmin.PolicyAssociationReq{Policies: []string{policy}, User: k}); err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminPolicyChangeAlreadyApplied" {
				return err
			}
		}
	}
	return nil
}

// listUsers plays ListUsers in pages as IAM does: MaxItems users (default 100, at most 1,000)
// in name order after Marker, the opaque marker here being the last name of the page before.
func (s *IAM) listUsers(w http.ResponseWriter, form url.Values) {
	names := slices.Sorted(maps.Keys(s.users))
	if m := form.Get("Marker"); m != "" {
		i, _ := slices.BinarySearch(names, m)
		for i < len(names) && names[i] <= m {
			i++
		}
		names = names[i:]
	}
	limit := 100
	if n, err := strconv.Atoi(form.Get("MaxItems")); err == nil && n > 0 {
		limit = min(n, 1000)
	}
	truncated := len(names) > limit
	names = names[:min(limit, len(names))]
	members := ""
	for _, n := range names {
		members += fmt.Sprintf("<member><Path>/</Path><UserName>%s</UserName><UserId>AIDASTANDIN</UserId><Arn>arn:aws:iam::000000000000:user/%s</Arn><CreateDate>2026-01-01T00:00:00Z</CreateDate></member>", esc(n), esc(n))
	}
	tail := "<IsTruncated>false</IsTruncated>"
	if truncated {
		tail = "<IsTruncated>true</IsTruncated><Marker>" + esc(names[len(names)-1]) + "</Marker>"
	}
	s.reply(w, "ListUsers", "<Users>"+members+"</Users>"+tail)
}

// Users returns the names of the users there are, sorted.
func (s *IAM) Users() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.users))
}

// Tags returns a user's tags (nil if there is no user).
func (s *IAM) Tags(name string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.users[name]; u != nil {
		return maps.Clone(u.tags)
	}
	return nil
}

// Actions returns the recorded actions in order.
func (s *IAM) Actions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.requests {
		out = append(out, r.Get("Action"))
	}
	return out
}

// CreateUser creates a user behind the extension's back (someone else's: no tags).
func (s *IAM) CreateUser(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[name] = &iamUser{policies: map[string]string{}, tags: map[string]string{}}
}

// CreateUserWithTags creates a user with tags behind the extension's back, as many as a test
// needs without the extension's requests.
func (s *IAM) CreateUserWithTags(name string, tags map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[name] = &iamUser{policies: map[string]string{}, tags: maps.Clone(tags)}
}

// User returns a user's inline policies and access key IDs (ok false if there is no user).
func (s *IAM) User(name string) (policies map[string]string, keys []string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.users[name]
	if u == nil {
		return nil, nil, false
	}
	return u.policies, slices.Clone(u.keys), true
}

type iamError struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Type    string   `xml:"Error>Type"`
	Code    string   `xml:"Error>Code"`
	Message string   `xml:"Error>Message"`
}

func (s *IAM) fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_ = xml.NewEncoder(w).Encode(iamError{Type: "Sender", Code: code, Message: msg})
}

func (s *IAM) reply(w http.ResponseWriter, action, result string) {
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<%sResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><%sResult>%s</%sResult><ResponseMetadata><RequestId>stand-in</RequestId></ResponseMetadata></%sResponse>`,
		action, action, result, action, action)
}

func esc(v string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(v))
	return b.String()
}

func (s *IAM) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, form)
	if r.Header.Get("Authorization") == "" {
		s.fail(w, 403, "MissingAuthenticationToken", "request is not signed")
		return
	}
	action, name := form.Get("Action"), form.Get("UserName")
	if s.denied[action] {
		s.fail(w, 403, "AccessDenied", "User: arn:aws:iam::000000000000:user/operator is not authorized to perform: iam:"+action)
		return
	}
	if action == "GetCallerIdentity" {
		// STS's, served here too (point the provider's STSEndpoint at the stand-in): the IAM
		// issuers' Location is the account of the operator's credentials.
		s.reply(w, action, "<Arn>arn:aws:iam::000000000000:user/operator</Arn><UserId>AIDASTANDIN</UserId><Account>000000000000</Account>")
		return
	}
	if action == "GetAccountSummary" {
		// AWS answers a map of every entity count and quota of the account; the extension reads
		// Users and UsersQuota.
		s.reply(w, action, fmt.Sprintf("<SummaryMap><entry><key>Users</key><value>%d</value></entry><entry><key>UsersQuota</key><value>%d</value></entry><entry><key>AccessKeysPerUserQuota</key><value>2</value></entry></SummaryMap>", len(s.users), s.usersQuota))
		return
	}
	u := s.users[name]
	if u == nil && action != "CreateUser" && action != "ListUsers" {
		s.fail(w, 404, "NoSuchEntity", "The user with name "+name+" cannot be found.")
		return
	}
	const date = "2026-01-01T00:00:00Z"
	switch action {
	case "CreateUser":
		if u != nil {
			s.fail(w, 409, "EntityAlreadyExists", "User with name "+name+" already exists.")
			return
		}
		if len(s.users) >= s.usersQuota {
			s.fail(w, 409, "LimitExceeded", fmt.Sprintf("Cannot exceed quota for UsersPerAccount: %d", s.usersQuota))
			return
		}
		tags := map[string]string{}
		for i := 1; form.Get(fmt.Sprintf("Tags.member.%d.Key", i)) != ""; i++ {
			tags[form.Get(fmt.Sprintf("Tags.member.%d.Key", i))] = form.Get(fmt.Sprintf("Tags.member.%d.Value", i))
		}
		s.users[name] = &iamUser{policies: map[string]string{}, tags: tags}
		s.reply(w, action, fmt.Sprintf("<User><Path>/</Path><UserName>%s</UserName><UserId>AIDASTANDIN</UserId><Arn>arn:aws:iam::000000000000:user/%s</Arn><CreateDate>%s</CreateDate></User>", esc(name), esc(name), date))
	case "ListUsers":
		s.listUsers(w, form)
	case "ListUserTags":
		members := ""
		for k, v := range u.tags {
			members += fmt.Sprintf("<member><Key>%s</Key><Value>%s</Value></member>", esc(k), esc(v))
		}
		s.reply(w, action, "<Tags>"+members+"</Tags><IsTruncated>false</IsTruncated>")
	case "TagUser":
		for i := 1; form.Get(fmt.Sprintf("Tags.member.%d.Key", i)) != ""; i++ {
			u.tags[form.Get(fmt.Sprintf("Tags.member.%d.Key", i))] = form.Get(fmt.Sprintf("Tags.member.%d.Value", i))
		}
		s.reply(w, action, "")
	case "UntagUser":
		for i := 1; form.Get(fmt.Sprintf("TagKeys.member.%d", i)) != ""; i++ {
			delete(u.tags, form.Get(fmt.Sprintf("TagKeys.member.%d", i)))
		}
		s.reply(w, action, "")
	case "PutUserPolicy":
		if len(form.Get("PolicyDocument")) > 2048 {
			s.fail(w, 409, "LimitExceeded", "Maximum policy size of 2048 bytes exceeded for user "+name)
			return
		}
		u.policies[form.Get("PolicyName")] = form.Get("PolicyDocument")
		if err := s.enforce(name); err != nil {
			s.fail(w, 500, "ServiceFailure", "mirroring to MinIO: "+err.Error())
			return
		}
		s.reply(w, action, "")
	case "DeleteUserPolicy":
		if _, ok := u.policies[form.Get("PolicyName")]; !ok {
			s.fail(w, 404, "NoSuchEntity", "no such policy")
			return
		}
		delete(u.policies, form.Get("PolicyName"))
		s.reply(w, action, "")
	case "CreateAccessKey":
		if len(u.keys) >= 2 {
			s.fail(w, 409, "LimitExceeded", "Cannot exceed quota for AccessKeysPerUser: 2")
			return
		}
		id, secret := make([]byte, 8), make([]byte, 20)
		_, _ = rand.Read(id)
		_, _ = rand.Read(secret)
		key := "AKIA" + hex.EncodeToString(id)
		u.keys = append(u.keys, key)
		if s.secrets != nil {
			s.secrets[key] = hex.EncodeToString(secret)
		}
		if err := s.enforce(name); err != nil {
			s.fail(w, 500, "ServiceFailure", "mirroring to MinIO: "+err.Error())
			return
		}
		s.reply(w, action, fmt.Sprintf("<AccessKey><UserName>%s</UserName><AccessKeyId>%s</AccessKeyId><Status>Active</Status><SecretAccessKey>%s</SecretAccessKey><CreateDate>%s</CreateDate></AccessKey>", esc(name), key, hex.EncodeToString(secret), date))
	case "ListAccessKeys":
		members, listed := "", u.keys
		if s.lagging[name] && len(listed) > 0 {
			listed = listed[:len(listed)-1]
			delete(s.lagging, name)
		}
		for _, k := range listed {
			members += fmt.Sprintf("<member><UserName>%s</UserName><AccessKeyId>%s</AccessKeyId><Status>Active</Status><CreateDate>%s</CreateDate></member>", esc(name), k, date)
		}
		s.reply(w, action, "<AccessKeyMetadata>"+members+"</AccessKeyMetadata><IsTruncated>false</IsTruncated>")
	case "DeleteAccessKey":
		i := slices.Index(u.keys, form.Get("AccessKeyId"))
		if i < 0 {
			s.fail(w, 404, "NoSuchEntity", "no such access key")
			return
		}
		u.keys = slices.Delete(u.keys, i, i+1)
		if s.enforcer != nil {
			if err := s.enforcer.RemoveUser(context.Background(), form.Get("AccessKeyId")); err != nil {
				s.fail(w, 500, "ServiceFailure", "mirroring to MinIO: "+err.Error())
				return
			}
		}
		s.reply(w, action, "")
	case "DeleteUser":
		if len(u.keys) > 0 || len(u.policies) > 0 {
			s.fail(w, 409, "DeleteConflict", "Cannot delete entity, must delete policies and access keys first.")
			return
		}
		delete(s.users, name)
		s.reply(w, action, "")
	default:
		s.fail(w, 400, "InvalidAction", "the stand-in does not play "+action)
	}
}
