// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// IAM is a stand-in for the parts of AWS IAM the extension calls for generated credentials
// (users and their tags, inline user policies, access keys, with IAM's limit of two keys per user and its
// refusal to delete a user that still has keys or policies). No emulator of IAM runs here, so
// this plays the Query API over HTTP and records every action; it is not AWS, and the keys it
// issues authenticate nowhere.
type IAM struct {
	*httptest.Server
	mu       sync.Mutex
	users    map[string]*iamUser
	requests []url.Values
}

type iamUser struct {
	policies map[string]string
	keys     []string
	tags     map[string]string
}

// StartIAM starts the stand-in.
func StartIAM() *IAM {
	s := &IAM{users: map[string]*iamUser{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
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
	u := s.users[name]
	if u == nil && action != "CreateUser" {
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
		tags := map[string]string{}
		for i := 1; form.Get(fmt.Sprintf("Tags.member.%d.Key", i)) != ""; i++ {
			tags[form.Get(fmt.Sprintf("Tags.member.%d.Key", i))] = form.Get(fmt.Sprintf("Tags.member.%d.Value", i))
		}
		s.users[name] = &iamUser{policies: map[string]string{}, tags: tags}
		s.reply(w, action, fmt.Sprintf("<User><Path>/</Path><UserName>%s</UserName><UserId>AIDASTANDIN</UserId><Arn>arn:aws:iam::000000000000:user/%s</Arn><CreateDate>%s</CreateDate></User>", esc(name), esc(name), date))
	case "ListUserTags":
		members := ""
		for k, v := range u.tags {
			members += fmt.Sprintf("<member><Key>%s</Key><Value>%s</Value></member>", esc(k), esc(v))
		}
		s.reply(w, action, "<Tags>"+members+"</Tags><IsTruncated>false</IsTruncated>")
	case "PutUserPolicy":
		u.policies[form.Get("PolicyName")] = form.Get("PolicyDocument")
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
		s.reply(w, action, fmt.Sprintf("<AccessKey><UserName>%s</UserName><AccessKeyId>%s</AccessKeyId><Status>Active</Status><SecretAccessKey>%s</SecretAccessKey><CreateDate>%s</CreateDate></AccessKey>", esc(name), key, hex.EncodeToString(secret), date))
	case "ListAccessKeys":
		members := ""
		for _, k := range u.keys {
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
