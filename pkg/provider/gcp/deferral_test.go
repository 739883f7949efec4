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
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

const (
	entryA = "shoot--a--b--1/"
	entryB = "shoot--a--b--10/" // shares entryA's name as a string prefix, not as a path
)

// rules returns the bucket's lifecycle rules as the front keeps them, as canonical JSON (keys
// sorted), so that a rule the client read and wrote back unchanged compares equal.
func rules(t *testing.T, bucket string) []string {
	t.Helper()
	raw, _ := gcs.BucketField(bucket, "lifecycle")
	var lc struct {
		Rule []any `json:"rule"`
	}
	if raw != nil {
		if err := json.Unmarshal(raw, &lc); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]string, len(lc.Rule))
	for i, r := range lc.Rule {
		b, _ := json.Marshal(r)
		out[i] = string(b)
	}
	return out
}

func canonical(rule string) string {
	var v any
	if err := json.Unmarshal([]byte(rule), &v); err != nil {
		panic(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// setRules replaces the bucket's lifecycle behind the extension's back (somebody else's rules).
func setRules(bucket string, rules ...string) {
	gcs.SetBucketField(bucket, "lifecycle", json.RawMessage(`{"rule":[`+strings.Join(rules, ",")+`]}`), false)
}

// generations lists every generation under prefix as "name#generation".
func generations(t *testing.T, c *storage.Client, bucket, prefix string) []string {
	t.Helper()
	var out []string
	it := c.Bucket(bucket).Objects(ctxFor(t), &storage.Query{Prefix: prefix, Versions: true})
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s#%d", a.Name, a.Generation))
	}
	slices.Sort(out)
	return out
}

// lockedEntries makes a versioned bucket with a 24h retention policy in which entryA has a
// noncurrent and two live generations and entryB two objects.
func lockedEntries(t *testing.T) (conformance.Stores, *storage.Client, string) {
	t.Helper()
	ctx := ctxFor(t)
	data := gcs.SecretData()
	s, c := newStore(t, data), rawClient(t, data)
	name := newBucketName()
	if err := ensure(t, s, name, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bucket(name).Update(ctx, storage.BucketAttrsToUpdate{VersioningEnabled: true}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{entryA + "etcd-main/v2/Full-1", entryA + "etcd-main/v2/Full-1", entryA + "etcd-main/v2/Incr-2", entryB + "etcd-main/v2/Full-1", entryB + "etcd-main/v2/Incr-2"} {
		if err := s.PutObject(ctx, name, k, []byte("data of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ensure(t, s, name, immutable(24*time.Hour, false)); err != nil {
		t.Fatal(err)
	}
	if a, err := c.Bucket(name).Attrs(ctx); err != nil || !a.VersioningEnabled {
		t.Fatalf("versioning after a bucket update: %v, %v; GCS keeps it on", a, err)
	}
	if got := generations(t, c, name, entryA); len(got) != 3 {
		t.Fatalf("entry A has generations %v; want 3 (one noncurrent)", got)
	}
	return s, c, name
}

// deferA deletes entryA, which retention holds entirely, and defers it.
func deferA(t *testing.T, s conformance.Stores, bucket string) (objectstore.Deferral, error) {
	t.Helper()
	ctx := ctxFor(t)
	prefix, _ := objectstore.EntryPrefix(strings.TrimSuffix(entryA, "/"))
	res, err := objectstore.DeletePrefix(ctx, s, bucket, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Locked != 3 {
		t.Fatalf("DeletePrefix = %+v, %v; want done with all 3 generations locked", res, err)
	}
	return s.DeferDeletion(ctx, bucket, prefix.String())
}

// TestDeferralCoversExactlyTheDeferredEntry: the live generations are marked and the bucket-wide
// rule deletes them; the noncurrent one, which fake-gcs-server does not mark by its generation
// (it patches the live one whatever generation is named), is covered by a noncurrent rule of the
// prefix that the operator's credentials write. Rules of others are kept by the deferral.
func TestDeferralCoversExactlyTheDeferredEntry(t *testing.T) {
	s, c, name := lockedEntries(t)
	foreign := []string{
		`{"action":{"type":"Delete"},"condition":{"age":3650,"matchesPrefix":["shoot--a--b--1/"]}}`,
		`{"action":{"type":"Delete"},"condition":{"daysSinceCustomTime":30}}`,
		`{"action":{"type":"SetStorageClass","storageClass":"COLDLINE"},"condition":{"age":365}}`,
	}
	setRules(name, append(slices.Clone(rules(t, name)), foreign...)...)
	before := rules(t, name)
	entryBBefore := generations(t, c, name, entryB)

	d, err := deferA(t, s, name)
	if err != nil {
		t.Fatal(err)
	}
	after := rules(t, name)
	if !slices.Equal(after[:len(before)], before) {
		t.Fatalf("rules that were there changed:\nbefore %v\nafter  %v", before, after[:len(before)])
	}
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	want := []string{
		canonical(`{"action":{"type":"Delete"},"condition":{"isLive":false,"matchesPrefix":["shoot--a--b--1/"],"noncurrentTimeBefore":"` + tomorrow + `"}}`),
	}
	if added := after[len(before):]; !slices.Equal(added, want) {
		t.Fatalf("added rules %v; want exactly the entry's noncurrent rule\n%v", added, want)
	}
	if !strings.Contains(d.Rule, "daysSinceCustomTime 1") || !strings.Contains(d.Rule, "matchesPrefix "+entryA) || !strings.Contains(d.Rule, "isLive false") {
		t.Fatalf("Deferral.Rule %q does not name the rules", d.Rule)
	}

	// GCS runs the rules (the front plays it): two days on, the retention of a day is over.
	deleted, err := gcs.RunLifecycle(name, time.Now().Add(49*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if left := generations(t, c, name, entryA); len(left) != 0 {
		t.Fatalf("the rules left generations of the deferred entry: %v (deleted %v)", left, deleted)
	}
	if got := generations(t, c, name, entryB); !slices.Equal(got, entryBBefore) {
		t.Fatalf("the other entry changed: %v; want %v", got, entryBBefore)
	}

	// A reconcile of the bucket keeps the rules of others and drops the noncurrent rule, which
	// covers nothing any more.
	if err := ensure(t, s, name, immutable(24*time.Hour, false)); err != nil {
		t.Fatal(err)
	}
	wantRules := slices.Clone(ownRules)
	for _, f := range foreign {
		wantRules = append(wantRules, canonical(f))
	}
	if got := rules(t, name); !slices.Equal(got, wantRules) {
		t.Fatalf("after a reconcile the rules are %v; want %v", got, wantRules)
	}
}

// ownRules are the lifecycle rules of a bucket of ours with no noncurrent rule.
var ownRules = []string{
	canonical(`{"action":{"type":"AbortIncompleteMultipartUpload"},"condition":{"age":7}}`),
	canonical(`{"action":{"type":"Delete"},"condition":{"daysSinceCustomTime":1}}`),
}

// TestNoncurrentRuleIsKeptWhileItCoversSomething: the bucket's reconcile keeps a noncurrent rule of
// a deferral while a generation it alone covers is left.
func TestNoncurrentRuleIsKeptWhileItCoversSomething(t *testing.T) {
	s, _, name := lockedEntries(t)
	if _, err := deferA(t, s, name); err != nil {
		t.Fatal(err)
	}
	with := rules(t, name)
	if len(with) != 3 {
		t.Fatalf("rules %v; want ours and the entry's noncurrent rule", with)
	}
	if err := ensure(t, s, name, immutable(24*time.Hour, false)); err != nil {
		t.Fatal(err)
	}
	if got := rules(t, name); !slices.Equal(got, with) {
		t.Fatalf("after a reconcile %v; want %v kept", got, with)
	}
}

// TestOldPerPrefixRulesAreDropped: the per-prefix rules of earlier versions give way on the
// bucket's reconcile: the custom-time one (the bucket-wide rule covers what it covers) at once,
// the noncurrent one once nothing it alone covers is left.
func TestOldPerPrefixRulesAreDropped(t *testing.T) {
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	if err := ensure(t, s, name, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PutObject(ctxFor(t), name, entryA+"live", []byte("v")); err != nil {
		t.Fatal(err)
	}
	setRules(name,
		`{"action":{"type":"AbortIncompleteMultipartUpload"},"condition":{"age":7}}`,
		`{"action":{"type":"Delete"},"condition":{"daysSinceCustomTime":1,"matchesPrefix":["`+entryA+`"]}}`,
		`{"action":{"type":"Delete"},"condition":{"isLive":false,"matchesPrefix":["`+entryB+`"],"noncurrentTimeBefore":"2026-01-01"}}`,
	)
	if err := ensure(t, s, name, nil); err != nil {
		t.Fatal(err)
	}
	if got := rules(t, name); !slices.Equal(got, ownRules) {
		t.Fatalf("after a reconcile %v; want %v", got, ownRules)
	}
}

func TestDeferralIsIdempotent(t *testing.T) {
	s, _, name := lockedEntries(t)
	if _, err := deferA(t, s, name); err != nil {
		t.Fatal(err)
	}
	before, bucketPatches, objectPatches := rules(t, name), patches(name), len(gcs.Requests("/storage/v1/b/"+name+"/o/"))
	if _, err := s.DeferDeletion(ctxFor(t), name, entryA); err != nil {
		t.Fatal(err)
	}
	if got := rules(t, name); !slices.Equal(got, before) || patches(name) != bucketPatches {
		t.Fatalf("a second deferral changed the lifecycle: %v", got)
	}
	for _, r := range gcs.Requests("/storage/v1/b/" + name + "/o/")[objectPatches:] {
		if r.Method == http.MethodPatch {
			t.Fatalf("a second deferral marked %s again", r.Path)
		}
	}
}

func TestDeferralReadsItsRuleBack(t *testing.T) {
	s, _, name := lockedEntries(t)
	before := rules(t, name)
	gcs.DropLifecycleOnce(name)
	_, err := deferA(t, s, name)
	var notKept *gcpprovider.RuleNotKeptError
	if !errors.As(err, &notKept) || !errors.Is(err, objectstore.ErrUnsupported) {
		t.Fatalf("DeferDeletion with a dropped rule: %v; want a RuleNotKeptError (ErrUnsupported), never done", err)
	}
	if got := rules(t, name); !slices.Equal(got, before) {
		t.Fatalf("rules %v; the front was to drop the update", got)
	}
	if _, err := s.DeferDeletion(ctxFor(t), name, entryA); err != nil {
		t.Fatalf("DeferDeletion once the store keeps rules: %v", err)
	}
}

// TestConcurrentDeferralsKeepEachOthersRules: on a bucket whose rule is missing (not reconciled
// since this design), concurrent deferrals with the operator's credentials put it there once.
func TestConcurrentDeferralsKeepEachOthersRules(t *testing.T) {
	ctx := ctxFor(t)
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	if err := ensure(t, s, name, nil); err != nil {
		t.Fatal(err)
	}
	setRules(name, ownRules[0])
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() { _, errs[i] = s.DeferDeletion(ctx, name, fmt.Sprintf("shoot--a--b--%d/", i)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := rules(t, name); !slices.Equal(got, ownRules) {
		t.Fatalf("rules %v; want %v", got, ownRules)
	}
}

func TestDeferralBeyondTheRuleLimit(t *testing.T) {
	ctx := ctxFor(t)
	s, _, name := lockedEntries(t)
	// Ours (2) and somebody else's 98: no room for entry A's noncurrent rule.
	filler := rules(t, name)
	for i := range 98 {
		filler = append(filler, canonical(fmt.Sprintf(`{"action":{"type":"Delete"},"condition":{"age":%d,"matchesPrefix":["other-%d/"]}}`, 1000+i, i)))
	}
	setRules(name, filler...)
	_, err := deferA(t, s, name)
	var limit *gcpprovider.RuleLimitError
	if !errors.As(err, &limit) || !errors.Is(err, objectstore.ErrUnsupported) || limit.Needed != 1 || limit.InUse != 100 {
		t.Fatalf("DeferDeletion without room: %v; want a RuleLimitError (ErrUnsupported) for 1 rule with 100 in use", err)
	}
	if got := rules(t, name); !slices.Equal(got, filler) {
		t.Fatal("a refused deferral changed the lifecycle")
	}

	// A spent noncurrent rule of ours (its prefix holds nothing) gives way; nobody else's does.
	spent := canonical(`{"action":{"type":"Delete"},"condition":{"isLive":false,"matchesPrefix":["shoot--gone--x--1/"],"noncurrentTimeBefore":"2026-01-01"}}`)
	filler = append(filler[:len(filler)-1], spent)
	setRules(name, filler...)
	if _, err := s.DeferDeletion(ctx, name, entryA); err != nil {
		t.Fatalf("DeferDeletion with a spent rule to drop: %v", err)
	}
	got := rules(t, name)
	if len(got) != 100 || !slices.Equal(got[:len(filler)-1], filler[:len(filler)-1]) {
		t.Fatalf("%d rules; want the 99 that were there before, unchanged, and entry A's", len(got))
	}
	if all := strings.Join(got, "\n"); strings.Contains(all, "shoot--gone") || strings.Count(all, `"matchesPrefix":["`+entryA+`"]`) != 1 {
		t.Fatalf("rules %v; want the spent rule replaced by entry A's", got[len(filler)-1:])
	}
}

func TestBucketDeletionDefersTheWholeBucket(t *testing.T) {
	s, c, name := lockedEntries(t)
	res, err := objectstore.DeletePrefix(ctxFor(t), s, name, objectstore.WholeBucket(), objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Locked != 5 {
		t.Fatalf("DeletePrefix(whole bucket) = %+v, %v; want done with 5 locked", res, err)
	}
	if _, err := s.DeferDeletion(ctxFor(t), name, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := gcs.RunLifecycle(name, time.Now().Add(49*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if left := generations(t, c, name, ""); len(left) != 0 {
		t.Fatalf("the whole-bucket rules left %v", left)
	}
	if err := s.DeleteBucket(ctxFor(t), name); err != nil {
		t.Fatal(err)
	}
}
