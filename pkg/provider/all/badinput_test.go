// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package all_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
)

// sharedConfigRow is one wrong providerConfig every provider refuses alike (the strict decoding
// of pkg/apis/decode and the backupFreshness every config inlines): head is the provider's own
// apiVersion and kind.
type sharedConfigRow struct {
	name  string
	raw   func(typ, head string) string
	names []string
}

func with(body string) func(string, string) string {
	return func(_, head string) string { return head + body }
}

// sharedConfigRows is the shared bad-input table: registering a provider in all.APIs runs it on
// that provider's API. Provider-specific rows (its own fields, secrets, names) stay in
// pkg/provider/<type>/badinput_test.go beside it.
var sharedConfigRows = []sharedConfigRow{
	{"wrong apiVersion", func(typ, _ string) string {
		return "apiVersion: " + typ + ".backup.extensions.gardener.cloud/v1beta1\nkind: BackupBucketConfig\n"
	}, []string{"providerConfig.apiVersion"}},
	{"wrong kind", func(typ, _ string) string {
		return "apiVersion: " + typ + ".backup.extensions.gardener.cloud/v1alpha1\nkind: BackupEntryConfig\n"
	}, []string{"providerConfig.kind"}},
	{"another provider's apiVersion", func(typ, _ string) string {
		other := "aws"
		if typ == other {
			other = "gcp"
		}
		return "apiVersion: " + other + ".backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
	}, []string{"providerConfig.apiVersion"}},
	{"not YAML", with("backupFreshness: [1h\n"), []string{"providerConfig"}},
	{"unknown field", with("noSuchSetting: true\n"), []string{"providerConfig", "noSuchSetting"}},
	{"backupFreshness: unparseable duration", with("backupFreshness:\n  fullSnapshotMaxAge: a day\n"), []string{"providerConfig.backupFreshness.fullSnapshotMaxAge", "must be a duration"}},
	{"backupFreshness: duration given as a number", with("backupFreshness:\n  fullSnapshotMaxAge: 5\n"), []string{"providerConfig.backupFreshness.fullSnapshotMaxAge", "must be a duration string"}},
	{"backupFreshness: negative age", with("backupFreshness:\n  deltaSnapshotMaxAge: -1h\n"), []string{"providerConfig.backupFreshness.deltaSnapshotMaxAge", "must be positive"}},
	{"backupFreshness: delta age longer than the full age", with("backupFreshness:\n  fullSnapshotMaxAge: 1h\n  deltaSnapshotMaxAge: 2h\n"), []string{"providerConfig.backupFreshness.deltaSnapshotMaxAge", "must not be longer than fullSnapshotMaxAge"}},
	{"backupFreshness: object given as a string", with("backupFreshness: 25h\n"), []string{"providerConfig.backupFreshness", "must be an object"}},
	{"backupFreshness: unknown field", with("backupFreshness:\n  maxAge: 1h\n"), []string{"providerConfig", "backupFreshness.maxAge"}},
}

// sharedBucketNames are bucket names no store takes.
var sharedBucketNames = map[string]string{"empty": "", "a slash": "backup/bucket", "a climb": "../backup"}

// TestSharedBadInput runs the shared table on every registered provider's API: each wrong input is
// refused as an invalid configuration (ERR_CONFIGURATION_PROBLEM) naming its field path, before
// any call (the API is SDK-free: there is nothing it could call). The head alone must decode, so
// that a row fails for its own reason.
func TestSharedBadInput(t *testing.T) {
	for typ, api := range all.APIs() {
		t.Run(typ, func(t *testing.T) {
			head := "apiVersion: " + typ + ".backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
			if _, err := api.DecodeBucketConfig([]byte(head)); err != nil {
				t.Fatalf("the head %q does not decode: %v", head, err)
			}
			for _, r := range sharedConfigRows {
				t.Run(r.name, func(t *testing.T) {
					_, err := api.DecodeBucketConfig([]byte(r.raw(typ, head)))
					if !errors.Is(err, objectstore.ErrInvalidConfig) {
						t.Fatalf("got %v; want ErrInvalidConfig", err)
					}
					if codes := lasterror.Codes(err); !slices.Equal(codes, []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) {
						t.Errorf("Gardener error codes %v; want %s", codes, gardencorev1beta1.ErrorConfigurationProblem)
					}
					for _, n := range r.names {
						if !strings.Contains(err.Error(), n) {
							t.Errorf("the message does not name %q: %v", n, err)
						}
					}
				})
			}
			for what, name := range sharedBucketNames {
				if err := api.ValidateBucketName(name); !errors.Is(err, objectstore.ErrInvalidConfig) {
					t.Errorf("bucket name with %s (%q): %v; want ErrInvalidConfig", what, name, err)
				}
			}
		})
	}
}
