// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package badinput

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Shared are the wrong inputs every provider refuses alike, for the provider type typ with the
// API api: the strict decoding of pkg/apis/decode, the backupFreshness every config inlines and
// bucket names no store takes. pkg/provider/all runs them on every registered API; a provider's
// own rows stay in its badinput_test.go.
func Shared(typ string, api config.API) []Case {
	head := Head(typ)
	other := "aws"
	if typ == other {
		other = "gcp"
	}
	cases := []Case{
		Config(api, "wrong apiVersion", "apiVersion: "+typ+".backup.extensions.gardener.cloud/v1beta1\nkind: BackupBucketConfig\n", "providerConfig.apiVersion"),
		Config(api, "wrong kind", "apiVersion: "+typ+".backup.extensions.gardener.cloud/v1alpha1\nkind: BackupEntryConfig\n", "providerConfig.kind"),
		Config(api, "another provider's apiVersion", Head(other), "providerConfig.apiVersion"),
		Config(api, "not YAML", head+"backupFreshness: [1h\n", "providerConfig"),
		Config(api, "unknown field", head+"noSuchSetting: true\n", "providerConfig", "noSuchSetting"),
		Config(api, "backupFreshness: unparseable duration", head+"backupFreshness:\n  fullSnapshotMaxAge: a day\n", `providerConfig.backupFreshness.fullSnapshotMaxAge: Invalid value: "a day": must be a duration`),
		Config(api, "backupFreshness: duration given as a number", head+"backupFreshness:\n  fullSnapshotMaxAge: 5\n", "providerConfig.backupFreshness.fullSnapshotMaxAge: Invalid value: 5: must be a duration string"),
		Config(api, "backupFreshness: negative age", head+"backupFreshness:\n  deltaSnapshotMaxAge: -1h\n", `providerConfig.backupFreshness.deltaSnapshotMaxAge: Invalid value: "-1h0m0s": must be positive`),
		Config(api, "backupFreshness: zero age", head+"backupFreshness:\n  fullSnapshotMaxAge: 0s\n", `providerConfig.backupFreshness.fullSnapshotMaxAge: Invalid value: "0s": must be positive`),
		Config(api, "backupFreshness: delta age longer than the full age", head+"backupFreshness:\n  fullSnapshotMaxAge: 1h\n  deltaSnapshotMaxAge: 2h\n", `providerConfig.backupFreshness.deltaSnapshotMaxAge: Invalid value: "2h0m0s": must not be longer than fullSnapshotMaxAge (1h0m0s)`),
		Config(api, "backupFreshness: object given as a string", head+"backupFreshness: 25h\n", `providerConfig.backupFreshness: Invalid value: "25h": a JSON string was given; it must be an object`),
		Config(api, "backupFreshness: unknown field", head+"backupFreshness:\n  fullSnapshotMaxAge: 25h\n  maxAge: 1h\n", "providerConfig", `unknown field "backupFreshness.maxAge"`),
	}
	for _, n := range []struct{ what, name string }{{"empty", ""}, {"a slash", "backup/bucket"}, {"a climb", "../backup"}} {
		cases = append(cases, Case{Name: "bucket name with " + n.what, Want: objectstore.ErrInvalidConfig,
			Run: func(*testing.T, map[string][]byte) error { return api.ValidateBucketName(n.name) }})
	}
	return cases
}
