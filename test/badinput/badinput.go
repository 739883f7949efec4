// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package badinput is the bad-input harness every provider's tests share: a provider's
// badinput_test.go gives only its rows (Case) and how to read its store (Harness); Run checks
// every row alike. The rows every provider shares (Shared) run on every registered API in
// pkg/provider/all.
//
// It lives under test/ because it checks the Gardener error code a refusal carries
// (pkg/controller/lasterror), which pkg/provider must not import.
package badinput

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Case is one wrong input: what the extension does with it (Run: decode a providerConfig, build
// a store and reconcile a bucket, delete an entry's prefix or a bucket, write etcd-backup), the
// sentinel it must answer with (which pkg/controller/lasterror maps to a Gardener error code),
// and what the message must name.
type Case struct {
	Name string
	// Data is the secret involved, if any: Harness.Secrets says which of its values no message
	// may show.
	Data map[string][]byte
	Run  func(t *testing.T, data map[string][]byte) error
	// Want is the sentinel the error must match; Or, if set, is the one a stand-in answers with
	// where it differs from the store (say why in the row).
	Want, Or error
	// Names are what the message must contain: field path, secret key, rule, regions.
	Names []string
}

// Harness is what Run checks around every case besides the error.
type Harness struct {
	// State describes what the store holds (buckets, with what changes on a write); no bad input
	// may change it. Nil: nothing to read (an API alone).
	State func(t *testing.T) []string
	// Secrets returns the values of a case's Data (and any other secret) that no message may
	// show. Nil: none.
	Secrets func(data map[string][]byte) []string
	// AtLeast fails a table shorter than this, so that a table cut short does not pass.
	AtLeast int
}

// Run runs every case as a subtest: its error matches Want (or Or), names every Names, shows no
// secret value, and the store's State is the same before and after.
func Run(t *testing.T, h Harness, cases []Case) {
	t.Helper()
	state := func(t *testing.T) []string {
		if h.State == nil {
			return nil
		}
		return h.State(t)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			before := state(t)
			err := c.Run(t, c.Data)
			if !errors.Is(err, c.Want) && (c.Or == nil || !errors.Is(err, c.Or)) {
				t.Fatalf("got %v; want %v (or %v)", err, c.Want, c.Or)
			}
			t.Log(err)
			for _, n := range c.Names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("the message does not name %q: %v", n, err)
				}
			}
			if h.Secrets != nil {
				for _, v := range h.Secrets(c.Data) {
					if v != "" && strings.Contains(err.Error(), v) {
						t.Errorf("the message reveals a secret value: %v", err)
					}
				}
			}
			if after := state(t); !slices.Equal(before, after) {
				t.Errorf("the store changed: before %v, after %v", before, after)
			}
		})
	}
	if len(cases) < h.AtLeast {
		t.Fatalf("only %d wrong inputs", len(cases))
	}
}

// Head is the apiVersion and kind of the providerConfig of the provider type typ.
func Head(typ string) string {
	return "apiVersion: " + typ + ".backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
}

// Config is the case of a providerConfig api refuses: an invalid configuration with Gardener's
// ERR_CONFIGURATION_PROBLEM, naming names.
func Config(api config.API, name, raw string, names ...string) Case {
	return Case{Name: "providerConfig: " + name, Want: objectstore.ErrInvalidConfig, Names: names,
		Run: func(t *testing.T, _ map[string][]byte) error {
			_, err := api.DecodeBucketConfig([]byte(raw))
			WantConfigurationProblem(t, err)
			return err
		}}
}

// DeleteEntry does what the BackupEntry delegate does on deletion with a store built from a
// case's secret: the deletion engine on the prefix of the entry shoot--garden--bad-input in bucket.
func DeleteEntry(store objectstore.DataPlane, bucket string) error {
	prefix, err := objectstore.EntryPrefix("shoot--garden--bad-input")
	if err != nil {
		return err
	}
	_, err = objectstore.DeletePrefix(context.Background(), store, bucket, prefix, objectstore.DeleteOptions{})
	return err
}

// WantConfigurationProblem checks that pkg/controller reports err with Gardener's
// ERR_CONFIGURATION_PROBLEM, the code a wrong providerConfig must carry.
func WantConfigurationProblem(t *testing.T, err error) {
	t.Helper()
	if codes := lasterror.Codes(err); !slices.Equal(codes, []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) {
		t.Errorf("Gardener error codes %v; want %s", codes, gardencorev1beta1.ErrorConfigurationProblem)
	}
}

// With returns a copy of data with the keys set to the values (key, value, key, value...), an
// empty value kept as empty.
func With(data map[string][]byte, kv ...string) map[string][]byte {
	out := maps.Clone(data)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = []byte(kv[i+1])
	}
	return out
}

// Without returns a copy of data without the keys.
func Without(data map[string][]byte, keys ...string) map[string][]byte {
	out := maps.Clone(data)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// Values returns the values of the keys in data longer than three characters (a shorter one is
// found by chance in any message).
func Values(data map[string][]byte, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if v := string(data[k]); len(v) > 3 {
			out = append(out, v)
		}
	}
	return out
}
