// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package memstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Keys of an issued credential's data.
const (
	KeyCredential = "credential"
	KeyBucket     = "bucket"
)

// MaxCredentials is how many credentials of one bucket may be valid at once, as with IAM access
// keys and Azure account keys.
const MaxCredentials = 2

// issued is what the store's issuer has issued, by credential ID.
type issued struct {
	byID map[string]*credential
	next int
	// unsupported, if set, is returned by IssueCredential (a store that cannot issue).
	unsupported error
	// location, if set, is what Location says instead of the store's own place: the issuer then
	// stands for operator's credentials that reach another place, and revokes nothing of this
	// store's.
	location string
}

type credential struct {
	bucket  string
	revoked bool
	// location is where it was issued: "" the store's own place, else the issuer's place
	// (MoveIssuer) at the time. An issuer sees and revokes only the credentials of its place.
	location string
}

// Issuer returns the store's issuer: credentials limited to one bucket, at most MaxCredentials
// valid at once, that a view of the store built by ForCredential presents.
func (s *Store) Issuer() objectstore.CredentialIssuer { return issuer{s} }

// RefuseIssuing makes IssueCredential fail with err wrapping objectstore.ErrUnsupported (nil:
// issue again), as a store without an identity service does.
func (s *Store) RefuseIssuing(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.issued.unsupported = nil
	if reason != "" {
		s.issued.unsupported = fmt.Errorf("%w: %s", objectstore.ErrUnsupported, reason)
	}
}

// MoveIssuer makes the store's issuer reach another place (empty: the store's own again), as an
// issuer built from operator's credentials of another account or project does: it says so in
// Location, and its RevokeCredentials finds nothing of this store's, which is success, as with a
// real identity service. What it issues meanwhile is of that place.
func (s *Store) MoveIssuer(location string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.issued.location = location
}

// ForCredential returns a view of the store reached with an issued credential's data: its bucket
// only, and nothing once the credential is revoked.
func (s *Store) ForCredential(data map[string][]byte) *Store {
	return &Store{state: s.state, pageSize: s.pageSize, credential: string(data[KeyCredential])}
}

// Valid lists the IDs of bucket's credentials that are not revoked, in issue order.
func (s *Store) Valid(bucket string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued.valid(bucket)
}

func (i *issued) valid(bucket string) []string {
	var ids []string
	for id, c := range i.byID {
		if c.bucket == bucket && !c.revoked {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return cmpID(a) - cmpID(b) })
	return ids
}

// validHere counts bucket's valid credentials of the issuer's current place.
func (i *issued) validHere(bucket string) int {
	n := 0
	for _, c := range i.byID {
		if c.bucket == bucket && !c.revoked && c.location == i.location {
			n++
		}
	}
	return n
}

func cmpID(id string) int { n, _ := strconv.Atoi(id[len("cred-"):]); return n }

// bucket returns a bucket the view's credential may reach; the caller holds s.mu.
func (s *Store) bucket(name string) (*bucket, error) {
	if err := s.access(name); err != nil {
		return nil, err
	}
	return s.state.bucket(name)
}

// access says whether the view's credential reaches bucket name and may manage it; the caller
// holds s.mu. An issued credential reaches its bucket's objects, never the bucket itself.
func (s *Store) access(name string) error {
	if s.credential == "" {
		return nil
	}
	c, ok := s.issued.byID[s.credential]
	switch {
	case !ok || c.revoked:
		return fmt.Errorf("credential %q: %w", s.credential, objectstore.ErrUnauthenticated)
	case c.bucket != name:
		return fmt.Errorf("credential %q on bucket %q: %w", s.credential, name, objectstore.ErrForbidden)
	}
	return nil
}

// manage says whether the view may create or delete bucket name: the operator's only.
func (s *Store) manage(name string) error {
	if err := s.access(name); err != nil {
		return err
	}
	if s.credential != "" {
		return fmt.Errorf("credential %q may not manage bucket %q: %w", s.credential, name, objectstore.ErrForbidden)
	}
	return nil
}

type issuer struct{ s *Store }

// IssueCredential implements objectstore.CredentialIssuer: credentials of the bucket not in
// inUse are revoked first (one issued but never recorded among them).
func (i issuer) IssueCredential(ctx context.Context, bucket string, inUse []string) (objectstore.Credential, error) {
	if err := ctx.Err(); err != nil {
		return objectstore.Credential{}, err
	}
	i.s.mu.Lock()
	defer i.s.mu.Unlock()
	if err := i.s.issued.unsupported; err != nil {
		return objectstore.Credential{}, err
	}
	if _, err := i.s.state.bucket(bucket); err != nil {
		return objectstore.Credential{}, err
	}
	i.s.issued.revokeExcept(bucket, inUse)
	if n := i.s.issued.validHere(bucket); n >= MaxCredentials {
		return objectstore.Credential{}, objectstore.Invalidf("bucket %q has %d credentials in use, the most there may be", bucket, n)
	}
	i.s.issued.next++
	id := "cred-" + strconv.Itoa(i.s.issued.next)
	i.s.issued.byID[id] = &credential{bucket: bucket, location: i.s.issued.location}
	return objectstore.Credential{ID: id, Data: map[string][]byte{KeyCredential: []byte(id), KeyBucket: []byte(bucket)}}, nil
}

// RevokeCredentials implements objectstore.CredentialIssuer. An issuer moved elsewhere
// (MoveIssuer) finds only what it issued there: the others stay valid, and that is success.
func (i issuer) RevokeCredentials(ctx context.Context, bucket string, keep []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	i.s.mu.Lock()
	defer i.s.mu.Unlock()
	i.s.issued.revokeExcept(bucket, keep)
	return nil
}

// HeldIn implements objectstore.CredentialIssuer: the bucket's credential whose data data is.
func (i issuer) HeldIn(ctx context.Context, bucket string, data map[string][]byte) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	i.s.mu.Lock()
	defer i.s.mu.Unlock()
	id := string(data[KeyCredential])
	if c, ok := i.s.issued.byID[id]; ok && c.bucket == bucket {
		return []string{id}, nil
	}
	return nil, nil
}

// Location implements objectstore.CredentialIssuer: the store itself, or where MoveIssuer moved
// the issuer.
func (i issuer) Location(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	i.s.mu.Lock()
	defer i.s.mu.Unlock()
	if i.s.issued.location != "" {
		return i.s.issued.location, nil
	}
	return fmt.Sprintf("memstore:%p", i.s.state), nil
}

func (i *issued) revokeExcept(bucket string, keep []string) {
	for id, c := range i.byID {
		if c.bucket == bucket && c.location == i.location && !slices.Contains(keep, id) {
			c.revoked = true
		}
	}
}

// CredentialReach implements objectstore.CredentialIssuer: the store refuses a credential every
// request outside its bucket.
func (i issuer) CredentialReach(bucket string) string {
	return "an in-memory credential that reaches bucket " + strconv.Quote(bucket) + " only"
}
