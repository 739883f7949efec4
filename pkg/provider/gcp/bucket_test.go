// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

func immutable(period time.Duration, locked bool) *gcpapi.BackupBucketConfig {
	return &gcpapi.BackupBucketConfig{Immutability: &gcpapi.ImmutableConfig{RetentionType: gcpapi.RetentionTypeBucket, RetentionPeriod: metav1.Duration{Duration: period}, Locked: locked}}
}

// ensure is EnsureBucket of s's bucket with the providerConfig cfg (nil: the defaults).
func ensure(t *testing.T, s conformance.Stores, name string, cfg *gcpapi.BackupBucketConfig) error {
	t.Helper()
	return gcpprovider.WithConfig(s.DataPlane, cfg).EnsureBucket(ctxFor(t), objectstore.Bucket{Name: name, Region: region})
}

// ensureFinal is ensure in the BackupBucket controller's pass that completes a hand-back
// (objectstore.Bucket.HandBackComplete).
func ensureFinal(t *testing.T, s conformance.Stores, name string, cfg *gcpapi.BackupBucketConfig) error {
	t.Helper()
	return gcpprovider.WithConfig(s.DataPlane, cfg).EnsureBucket(ctxFor(t), objectstore.Bucket{Name: name, Region: region, HandBackComplete: true})
}

// patches counts the bucket updates the front has seen for a bucket.
func patches(name string) int {
	n := 0
	for _, r := range gcs.Requests("/storage/v1/b/" + name) {
		if r.Method == http.MethodPatch && r.Path == "/storage/v1/b/"+name {
			n++
		}
	}
	return n
}

func field(t *testing.T, bucket, name string) map[string]any {
	t.Helper()
	raw, _ := gcs.BucketField(bucket, name)
	if raw == nil {
		return nil
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

func TestBucketSettingsAreCreatedAndConverged(t *testing.T) {
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	cfg := immutable(24*time.Hour, false)
	cfg.SoftDelete = &gcpapi.SoftDeleteConfig{RetentionDuration: metav1.Duration{Duration: 7 * 24 * time.Hour}}
	cfg.Labels = map[string]string{"cost-center": "platform"}
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	check := func(when string, others ...string) {
		t.Helper()
		iam := field(t, name, "iamConfiguration")
		if ubla, _ := iam["uniformBucketLevelAccess"].(map[string]any); ubla["enabled"] != true || iam["publicAccessPrevention"] != "enforced" {
			t.Fatalf("%s: iamConfiguration = %v; want uniform bucket-level access and enforced public access prevention", when, iam)
		}
		rules, _ := field(t, name, "lifecycle")["rule"].([]any)
		if len(rules) != 2+len(others) || !strings.Contains(fmt.Sprint(rules[0]), "AbortIncompleteMultipartUpload") || fmt.Sprint(rules[1]) != "map[action:map[type:Delete] condition:map[daysSinceCustomTime:1]]" {
			t.Fatalf("%s: lifecycle rules = %v; want the abort-upload rule and the bucket's deferral rule, then the rules of others %v", when, rules, others)
		}
		for i, o := range others {
			if fmt.Sprint(rules[2+i]) != o {
				t.Fatalf("%s: lifecycle rules = %v; want the rule of others %s kept", when, rules, o)
			}
		}
		if rp := field(t, name, "retentionPolicy"); fmt.Sprint(rp["retentionPeriod"]) != "86400" {
			t.Fatalf("%s: retentionPolicy = %v; want 86400 s", when, rp)
		}
		if sd := field(t, name, "softDeletePolicy"); fmt.Sprint(sd["retentionDurationSeconds"]) != "604800" {
			t.Fatalf("%s: softDeletePolicy = %v; want 604800 s", when, sd)
		}
		if l := field(t, name, "labels"); l["cost-center"] != "platform" || l[gcpapi.ManagedLabel] != gcpapi.ManagedLabelValue {
			t.Fatalf("%s: labels = %v", when, l)
		}
	}
	check("after creation")

	before := patches(name)
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	if after := patches(name); after != before {
		t.Fatalf("a converged bucket was updated again (%d updates); reconciles must be idempotent", after-before)
	}

	// Drift: somebody opens the bucket, replaces the lifecycle with a rule of theirs, drops a label
	// and the retention. Ours is corrected; their rule and label are kept.
	gcs.SetBucketField(name, "iamConfiguration", json.RawMessage(`{"uniformBucketLevelAccess":{"enabled":false},"publicAccessPrevention":"inherited"}`), false)
	gcs.SetBucketField(name, "lifecycle", json.RawMessage(`{"rule":[{"action":{"type":"Delete"},"condition":{"age":1}}]}`), false)
	// (The label managed-by stays: a bucket without it is somebody else's unless it is
	// provider-gcp's, see takeover_test.go.)
	gcs.SetBucketField(name, "labels", json.RawMessage(`{"other":"kept","`+gcpapi.ManagedLabel+`":"`+gcpapi.ManagedLabelValue+`"}`), false)
	gcs.SetBucketField(name, "retentionPolicy", nil, false)
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	check("after drift correction", "map[action:map[type:Delete] condition:map[age:1]]")
	if l := field(t, name, "labels"); l["other"] != "kept" {
		t.Fatalf("labels the extension does not declare are left alone, got %v", l)
	}
}

func TestSoftDeleteIsOffByDefault(t *testing.T) {
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	if err := ensure(t, s, name, nil); err != nil {
		t.Fatal(err)
	}
	if sd := field(t, name, "softDeletePolicy"); fmt.Sprint(sd["retentionDurationSeconds"]) != "0" {
		t.Fatalf("softDeletePolicy = %v; want 0 (GCS's default of 7 days switched off)", sd)
	}
	if rp := field(t, name, "retentionPolicy"); rp != nil {
		t.Fatalf("retentionPolicy = %v; want none", rp)
	}
}

func TestRetentionPolicyLockIsNeverWeakened(t *testing.T) {
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	if err := ensure(t, s, name, immutable(48*time.Hour, true)); err != nil {
		t.Fatal(err)
	}
	if _, locked := gcs.BucketField(name, "retentionPolicy"); !locked {
		t.Fatal("the retention policy is not locked")
	}
	locks := gcs.Requests("/storage/v1/b/" + name + "/lockRetentionPolicy")
	if len(locks) != 1 || locks[0].Query.Get("ifMetagenerationMatch") == "" {
		t.Fatalf("lock requests = %+v; want one, guarded by the metageneration", locks)
	}
	refused := []struct {
		name string
		cfg  *gcpapi.BackupBucketConfig
	}{
		{"shorter period", immutable(24*time.Hour, true)},
		{"unlocked", immutable(48*time.Hour, false)},
		{"no immutability", nil},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			before := patches(name)
			err := ensure(t, s, name, c.cfg)
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "locked retention policy") {
				t.Fatalf("got %v; want a configuration error about the locked policy", err)
			}
			if patches(name) != before {
				t.Fatal("the bucket was updated although the declaration was refused")
			}
			if rp := field(t, name, "retentionPolicy"); fmt.Sprint(rp["retentionPeriod"]) != "172800" {
				t.Fatalf("retentionPolicy = %v; want 172800 s, untouched", rp)
			}
		})
	}
	if err := ensure(t, s, name, immutable(72*time.Hour, true)); err != nil {
		t.Fatalf("extending a locked policy: %v", err)
	}
	if rp := field(t, name, "retentionPolicy"); fmt.Sprint(rp["retentionPeriod"]) != "259200" {
		t.Fatalf("retentionPolicy = %v; want 259200 s after extension", rp)
	}
	if n := len(gcs.Requests("/storage/v1/b/" + name + "/lockRetentionPolicy")); n != 1 {
		t.Fatalf("%d lock requests; a locked policy is not locked again", n)
	}
}

// TestUnlockedRetentionKeepsTheLonger: an unlocked retention policy longer than declared, or not
// declared, is kept (never shortened or removed, whoever set it) and the plan names it as kept;
// a longer declaration extends it, and a lock declared over a longer period locks that period.
func TestUnlockedRetentionKeepsTheLonger(t *testing.T) {
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	if err := ensure(t, s, name, immutable(48*time.Hour, false)); err != nil {
		t.Fatal(err)
	}
	period := func() string { return fmt.Sprint(field(t, name, "retentionPolicy")["retentionPeriod"]) }
	for _, c := range []struct {
		name string
		cfg  *gcpapi.BackupBucketConfig
	}{{"declared shorter", immutable(24*time.Hour, false)}, {"not declared", nil}} {
		if got := plan(t, name, c.cfg); !slices.Equal(got, []string{"keep retention policy"}) {
			t.Errorf("%s: plan %v; want the retention policy named as kept", c.name, got)
		}
		before := patches(name)
		if err := ensure(t, s, name, c.cfg); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := period(); got != "172800" {
			t.Fatalf("%s: retention period %s s; want 172800 s, the longer one, kept", c.name, got)
		}
		if patches(name) != before {
			t.Fatalf("%s: the bucket was updated; a kept retention writes nothing", c.name)
		}
	}
	if err := ensure(t, s, name, immutable(72*time.Hour, false)); err != nil {
		t.Fatal(err)
	}
	if got := period(); got != "259200" {
		t.Fatalf("declared longer: retention period %s s; want 259200 s", got)
	}
	if err := ensure(t, s, name, immutable(24*time.Hour, true)); err != nil {
		t.Fatal(err)
	}
	if _, locked := gcs.BucketField(name, "retentionPolicy"); !locked || period() != "259200" {
		t.Fatalf("a lock declared over a longer period: period %s s, locked %t; want 259200 s, locked", period(), locked)
	}
}
