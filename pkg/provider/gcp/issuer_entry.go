// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/googleapi"
	iam "google.golang.org/api/iam/v1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// entryIssuer issues an entry's credentials as keys of one service account per entry and
// access, bound with EntryRole (read-write) or EntryReadRole (read-only) on the managed folder
// `<entry>/` of the bucket and nowhere else. GCS applies a managed folder's IAM policy to the
// objects whose names start with the folder's name, trailing slash included
// (https://cloud.google.com/storage/docs/managed-folders, "IAM for managed folders"), so entry
// "uid1" does not reach "uid10/". The account's description names the bucket, the prefix and the
// access (the issuer touches no account without it); its display name carries the retirement
// markers (GCP keys cannot be given an expiry after creation). GCP allows 100 service accounts
// per project by default (raisable) and 10 keys per account.
type entryIssuer struct {
	*iamIssuer

	provider *Provider
	region   string
}

var _ objectstore.EntryCredentialIssuer = (*entryIssuer)(nil)

const (
	// EntryRole is what an entry's account has on its managed folder: read, create, overwrite,
	// delete and list objects (etcd-backup-restore's uploads, composes, garbage collection and
	// restores), no IAM and no managed folder administration.
	EntryRole = "roles/storage.objectUser"
	// EntryReadRole is a `source-` entry's role on the managed folder: read and list only.
	EntryReadRole = "roles/storage.objectViewer"

	entryDisplayName = "gardener-backup entry"
	retireMarker     = " r:"
	// maxDisplayName is GCP's limit of a service account's display name.
	maxDisplayName = 100
	// maxDescription is GCP's limit of a service account's description.
	maxDescription = 256
	// entryProofTimeout bounds how long a new key and binding may take to work: GCP applies IAM
	// changes usually within a minute (up to 7, says its documentation); the next pass retries.
	entryProofTimeout = 90 * time.Second
)

// EntryServiceAccountID is the account ID of prefix of bucket with access: GCP allows 6 to 30
// characters, so it is 25 hex digits of their SHA-256; the description names them in full.
func EntryServiceAccountID(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	sum := sha256.Sum256([]byte(bucket + "\x00" + prefix.String() + "\x00" + string(access)))
	return "gbke-" + hex.EncodeToString(sum[:])[:25]
}

func entryDescription(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	return fmt.Sprintf("etcd backups under %s (%s) of bucket %s (gardener-extension-backup)", prefix.String(), access, bucket)
}

func entryRole(access objectstore.EntryAccess) string {
	if access == objectstore.EntryReadOnly {
		return EntryReadRole
	}
	return EntryRole
}

func (s *entryIssuer) entryAccountName(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	return "projects/" + s.projectID + "/serviceAccounts/" + EntryServiceAccountID(bucket, prefix, access) + "@" + s.projectID + ".iam.gserviceaccount.com"
}

// entryAccount reads the entry's account: nil when there is none or it is not this extension's
// account of that entry (somebody else's is never touched).
func (s *entryIssuer) entryAccount(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) (*iam.ServiceAccount, error) {
	sa, err := s.iam.Projects.ServiceAccounts.Get(s.entryAccountName(bucket, prefix, access)).Context(ctx).Do()
	if err != nil {
		if err = iamError("service account of entry "+prefix.String(), err); errors.Is(err, objectstore.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	if sa.Description != entryDescription(bucket, prefix, access) {
		return nil, nil
	}
	return sa, nil
}

// checkEntry refuses what has no entry's managed folder: the whole bucket, a malformed prefix.
func checkEntry(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) error {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	if err := prefix.Validate(); err != nil || prefix.IsWholeBucket() {
		return fmt.Errorf("%w: an entry's managed folder needs an entry's prefix, not %q", objectstore.ErrInvalidConfig, prefix.String())
	}
	if d := entryDescription(bucket, prefix, access); len(d) > maxDescription {
		return objectstore.Invalidf("the description of the service account of entry %q of bucket %q would have %d characters, over GCP's limit of %d", prefix.String(), bucket, len(d), maxDescription)
	}
	return nil
}

// IssueEntryCredential implements objectstore.EntryCredentialIssuer: the managed folder (created
// if missing), the entry's account (created if missing) bound on it, its keys not in use and not
// retiring deleted, a new key proven by listing the folder with it.
func (s *entryIssuer) IssueEntryCredential(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, inUse []string) (objectstore.Credential, error) {
	if err := checkEntry(bucket, prefix, access); err != nil {
		return objectstore.Credential{}, err
	}
	if err := s.ensureManagedFolder(ctx, bucket, prefix.String()); err != nil {
		return objectstore.Credential{}, err
	}
	sa, err := s.entryAccount(ctx, bucket, prefix, access)
	if err != nil {
		return objectstore.Credential{}, err
	}
	if sa == nil {
		if sa, err = s.createEntryAccount(ctx, bucket, prefix, access); err != nil {
			return objectstore.Credential{}, err
		}
	}
	if _, err := s.updateFolderBinding(ctx, bucket, prefix.String(), entryRole(access), sa.Email, true); err != nil {
		return objectstore.Credential{}, err
	}
	if _, err := s.deleteEntryKeys(ctx, sa, inUse, true); err != nil {
		return objectstore.Credential{}, err
	}
	key, err := s.iam.Projects.ServiceAccounts.Keys.Create(sa.Name, &iam.CreateServiceAccountKeyRequest{
		PrivateKeyType: "TYPE_GOOGLE_CREDENTIALS_FILE", KeyAlgorithm: "KEY_ALG_RSA_2048",
	}).Context(ctx).Do()
	if isLimitReached(err) {
		return objectstore.Credential{}, fmt.Errorf("creating a key of %s: %w: the account has as many keys as GCP allows (10): %w", sa.Email, objectstore.ErrQuotaExceeded, err)
	}
	if err != nil {
		return objectstore.Credential{}, iamError("creating a key of "+sa.Email, err)
	}
	id := path.Base(key.Name)
	file, err := base64.StdEncoding.DecodeString(key.PrivateKeyData)
	if err == nil {
		_, err = parseServiceAccount(file)
	}
	data := map[string][]byte{KeyServiceAccountJSON: file}
	if len(s.endpoint) > 0 {
		data[KeyStorageAPIEndpoint] = s.endpoint
	}
	if err == nil {
		err = s.proveEntryCredential(ctx, data, bucket, prefix)
	}
	if err != nil {
		_, _ = s.iam.Projects.ServiceAccounts.Keys.Delete(key.Name).Context(ctx).Do()
		return objectstore.Credential{}, fmt.Errorf("the new key %s of %s: %w", id, sa.Email, err)
	}
	return objectstore.Credential{ID: id, Data: data}, nil
}

// createEntryAccount creates the entry's account. The project's limit of service accounts is
// ErrQuotaExceeded: GCP answers CreateServiceAccount with 429 RESOURCE_EXHAUSTED "Maximum number
// of service accounts on project reached." and a RetryInfo of a day, unlike its rate limits.
func (s *entryIssuer) createEntryAccount(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) (*iam.ServiceAccount, error) {
	id := EntryServiceAccountID(bucket, prefix, access)
	sa, err := s.iam.Projects.ServiceAccounts.Create("projects/"+s.projectID, &iam.CreateServiceAccountRequest{
		AccountId:      id,
		ServiceAccount: &iam.ServiceAccount{DisplayName: entryDisplayName, Description: entryDescription(bucket, prefix, access)},
	}).Context(ctx).Do()
	var apiErr *googleapi.Error
	switch {
	case err == nil:
		return sa, nil
	case errors.As(err, &apiErr) && apiErr.Code == http.StatusConflict:
		// Ours after all when a concurrent pass created it since the read; otherwise somebody else's.
		if sa, rerr := s.entryAccount(ctx, bucket, prefix, access); rerr != nil || sa != nil {
			return sa, rerr
		}
		return nil, fmt.Errorf("%w: service account %s exists and is not described as this extension's account of entry %q of bucket %q: not taken over", objectstore.ErrOwnedByOther, id, prefix.String(), bucket)
	case isLimitReached(err):
		return nil, fmt.Errorf("creating service account %s for entry %q: %w: project %s has as many service accounts as GCP allows it (100 by default): ask GCP for a higher quota, delete unused service accounts, give this seed's backups a project of their own, or switch entryCredentials off for a seed: %w", id, prefix.String(), objectstore.ErrQuotaExceeded, s.projectID, err)
	}
	return nil, iamError("creating service account "+id, err)
}

// retiring parses the retirement markers of an account's display name: markerID -> time.
func retiring(displayName string) map[string]time.Time {
	out := map[string]time.Time{}
	for _, m := range strings.Split(displayName, retireMarker)[1:] {
		id, at, ok := strings.Cut(strings.TrimSpace(m), "@")
		if sec, err := strconv.ParseInt(at, 10, 64); ok && err == nil {
			out[id] = time.Unix(sec, 0)
		}
	}
	return out
}

// markerID is the part of a key ID a retirement marker holds: the last 12 hex digits of GCP's 40
// tell the at most 10 keys of one account apart, and three markers fit into a display name.
func markerID(id string) string { return id[max(0, len(id)-12):] }

// deleteEntryKeys deletes the account's user-managed keys not kept (and, with spareRetiring,
// not retiring before their time), and drops the markers of the keys gone. It returns how many
// keys are left (kept or spared).
func (s *entryIssuer) deleteEntryKeys(ctx context.Context, sa *iam.ServiceAccount, keep []string, spareRetiring bool) (left int, err error) {
	list, err := s.iam.Projects.ServiceAccounts.Keys.List(sa.Name).KeyTypes("USER_MANAGED").Context(ctx).Do()
	if err != nil {
		return 0, iamError("listing the keys of "+sa.Email, err)
	}
	now, marks := time.Now(), retiring(sa.DisplayName)
	leftMarks := map[string]time.Time{}
	for _, k := range list.Keys {
		id := path.Base(k.Name)
		at, retires := marks[markerID(id)]
		if k.KeyType != "USER_MANAGED" || slices.Contains(keep, id) || (spareRetiring && retires && at.After(now)) {
			if retires {
				leftMarks[markerID(id)] = at
			}
			left++
			continue
		}
		if _, err := s.iam.Projects.ServiceAccounts.Keys.Delete(k.Name).Context(ctx).Do(); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
			return left, iamError("deleting key "+id+" of "+sa.Email, err)
		}
	}
	if len(leftMarks) != len(marks) {
		return left, s.setRetirements(ctx, sa, leftMarks)
	}
	return left, nil
}

// setRetirements writes the retirement markers into the account's display name.
func (s *entryIssuer) setRetirements(ctx context.Context, sa *iam.ServiceAccount, marks map[string]time.Time) error {
	name := entryDisplayName
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range marks {
			if !yield(id) {
				return
			}
		}
	}) {
		name += retireMarker + id + "@" + strconv.FormatInt(marks[id].Unix(), 10)
	}
	if len(name) > maxDisplayName {
		return fmt.Errorf("%w: service account %s would retire %d keys at once, more than its display name can record", objectstore.ErrQuotaExceeded, sa.Email, len(marks))
	}
	if _, err := s.iam.Projects.ServiceAccounts.Patch(sa.Name, &iam.PatchServiceAccountRequest{
		ServiceAccount: &iam.ServiceAccount{DisplayName: name}, UpdateMask: "displayName",
	}).Context(ctx).Do(); err != nil {
		return iamError("recording the retirement of keys on "+sa.Email, err)
	}
	sa.DisplayName = name
	return nil
}

// RevokeEntryCredentials implements objectstore.EntryCredentialIssuer: with nothing kept, the
// account's binding on the managed folder and the account go too, and the folder once nobody is
// bound on it and it holds no objects (GCS refuses to delete a folder with objects; one left
// grants nothing).
func (s *entryIssuer) RevokeEntryCredentials(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, keep []string) error {
	if err := checkEntry(bucket, prefix, access); err != nil {
		return err
	}
	sa, err := s.entryAccount(ctx, bucket, prefix, access)
	if err != nil || sa == nil {
		return err // none, or somebody else's: nothing of ours to revoke
	}
	if _, err := s.deleteEntryKeys(ctx, sa, keep, false); err != nil || len(keep) > 0 {
		return err
	}
	return s.deleteEntryAccount(ctx, bucket, prefix, access, sa)
}

// deleteEntryAccount removes an account whose keys are gone: its binding on the managed folder,
// the folder once nobody is bound on it and GCS lets it go (it refuses a folder with objects),
// then the account. In this order an interrupted removal leaves the account, by whose marks the
// next revocation or sweep finds the rest.
func (s *entryIssuer) deleteEntryAccount(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, sa *iam.ServiceAccount) error {
	anyBound, err := s.updateFolderBinding(ctx, bucket, prefix.String(), entryRole(access), sa.Email, false)
	switch {
	case errors.Is(err, objectstore.ErrNotFound), errors.Is(err, objectstore.ErrBucketNotFound):
	case err != nil:
		return err
	case !anyBound:
		if err := s.raw.ManagedFolders.Delete(bucket, prefix.String()).Context(ctx).Do(); err != nil && statusOf(err) != http.StatusNotFound && statusOf(err) != http.StatusConflict && statusOf(err) != http.StatusPreconditionFailed {
			return fmt.Errorf("deleting managed folder %q of bucket %q: %w", prefix.String(), bucket, classify(err))
		}
	}
	if _, err := s.iam.Projects.ServiceAccounts.Delete(sa.Name).Context(ctx).Do(); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
		return iamError("deleting service account "+sa.Email, err)
	}
	return nil
}

// RetireEntryCredentials implements objectstore.EntryCredentialIssuer: the account's display name
// records `r:<key ID's last 12 hex>@<unix time>`; a time not in the future deletes the keys at
// once.
func (s *entryIssuer) RetireEntryCredentials(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, ids []string, after time.Time) error {
	if err := checkEntry(bucket, prefix, access); err != nil {
		return err
	}
	sa, err := s.entryAccount(ctx, bucket, prefix, access)
	if err != nil || sa == nil {
		return err
	}
	if !after.After(time.Now()) {
		for _, id := range ids {
			if _, err := s.iam.Projects.ServiceAccounts.Keys.Delete(sa.Name + "/keys/" + id).Context(ctx).Do(); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
				return iamError("deleting key "+id+" of "+sa.Email, err)
			}
		}
		return nil
	}
	marks := retiring(sa.DisplayName)
	for _, id := range ids {
		marks[markerID(id)] = after
	}
	return s.setRetirements(ctx, sa, marks)
}

// listingLag bounds how long IAM's eventually consistent key listing may miss a key (changes
// usually show within a minute, at worst within about seven): a marker that has come whose key is
// not listed is kept that long, then taken for gone.
const listingLag = 10 * time.Minute

// EndRetiredEntryCredentials implements objectstore.EntryCredentialIssuer: the keys whose
// display-name marker has come go, with the marker. Only those found due in one listing: the
// listing may miss a key created just before (the one just published), and no key is deleted
// for being absent from it.
func (s *entryIssuer) EndRetiredEntryCredentials(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) (time.Time, error) {
	if err := checkEntry(bucket, prefix, access); err != nil {
		return time.Time{}, err
	}
	sa, err := s.entryAccount(ctx, bucket, prefix, access)
	if err != nil || sa == nil {
		return time.Time{}, err
	}
	now, marks := time.Now(), retiring(sa.DisplayName)
	if first := earliest(marks); first.IsZero() || first.After(now) {
		return first, nil // none due
	}
	list, err := s.iam.Projects.ServiceAccounts.Keys.List(sa.Name).KeyTypes("USER_MANAGED").Context(ctx).Do()
	if err != nil {
		return earliest(marks), iamError("listing the keys of "+sa.Email, err)
	}
	left := maps.Clone(marks)
	for _, k := range list.Keys {
		id := path.Base(k.Name)
		at, marked := marks[markerID(id)]
		if !marked || k.KeyType != "USER_MANAGED" || at.After(now) {
			continue
		}
		if _, err := s.iam.Projects.ServiceAccounts.Keys.Delete(k.Name).Context(ctx).Do(); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
			return earliest(marks), iamError("deleting key "+id+" of "+sa.Email, err)
		}
		delete(left, markerID(id))
	}
	wake := map[string]time.Time{}
	for id, at := range left {
		switch {
		case at.After(now):
			wake[id] = at
		case now.Before(at.Add(listingLag)): // due, not listed: maybe not yet
			wake[id] = at.Add(listingLag)
		default: // due, not listed for longer than the listing lags: gone
			delete(left, id)
		}
	}
	if len(left) != len(marks) {
		if err := s.setRetirements(ctx, sa, left); err != nil {
			return earliest(marks), err
		}
	}
	return earliest(wake), nil
}

// earliest is the earliest of times (zero: none).
func earliest(times map[string]time.Time) time.Time {
	var first time.Time
	for _, at := range times {
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return first
}

// Owns implements objectstore.EntryCredentialIssuer.
func (s *entryIssuer) Owns(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, id string) (bool, error) {
	if err := checkEntry(bucket, prefix, access); err != nil {
		return false, err
	}
	sa, err := s.entryAccount(ctx, bucket, prefix, access)
	if err != nil || sa == nil {
		return false, err
	}
	list, err := s.iam.Projects.ServiceAccounts.Keys.List(sa.Name).KeyTypes("USER_MANAGED").Context(ctx).Do()
	if err != nil {
		return false, iamError("listing the keys of "+sa.Email, err)
	}
	return slices.ContainsFunc(list.Keys, func(k *iam.ServiceAccountKey) bool { return path.Base(k.Name) == id }), nil
}

// CredentialID implements objectstore.EntryCredentialIssuer: the key file's private_key_id (the
// IAM API's key ID).
func (s *entryIssuer) CredentialID(data map[string][]byte) string {
	var key struct {
		Type         string `json:"type"`
		PrivateKeyID string `json:"private_key_id"`
	}
	if json.Unmarshal(data[KeyServiceAccountJSON], &key) != nil || key.Type != "service_account" {
		return ""
	}
	return key.PrivateKeyID
}

// CredentialReach implements objectstore.EntryCredentialIssuer.
func (s *entryIssuer) CredentialReach(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	what := "reading, writing and deleting"
	if access == objectstore.EntryReadOnly {
		what = "reading"
	}
	return fmt.Sprintf("a key of service account %s, bound with %s on managed folder %q of bucket %q only: %s the objects whose names start with %q and listing them with such a prefix; GCS checks it on every request, rewrites and composes included, so it reaches no other entry's objects and nothing of the bucket itself",
		EntryServiceAccountID(bucket, prefix, access), entryRole(access), prefix.String(), bucket, what, prefix.String())
}

// proveEntryCredential lists prefix with data, retrying while GCP does not apply the new key or
// binding yet: a credential is published only once it works.
func (s *entryIssuer) proveEntryCredential(ctx context.Context, data map[string][]byte, bucket string, prefix objectstore.Prefix) error {
	store, err := s.provider.newStore(ctx, provider.Credentials{Data: data, Region: s.region})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, entryProofTimeout)
	defer cancel()
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		_, err = store.raw.Objects.List(bucket).Prefix(prefix.String()).MaxResults(1).Context(ctx).Do()
		if err == nil {
			return nil
		}
		err = classify(err)
		if !errors.Is(err, objectstore.ErrUnauthenticated) && !errors.Is(err, objectstore.ErrForbidden) {
			return fmt.Errorf("proving it usable (listing %q of bucket %q): %w", prefix.String(), bucket, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not usable within %s (listing %q of bucket %q): %w", entryProofTimeout, prefix.String(), bucket, err)
		case <-time.After(wait):
		}
	}
}
