// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package connect_test

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestDecideServe: which store an entry's etcd-backup names, over every observation.
func TestDecideServe(t *testing.T) {
	place := func(serve copystore.Serve, bucket string) *connect.CopyPlace {
		return &connect.CopyPlace{Settings: &copystore.Settings{CredentialsRef: "backup-copy", Serve: serve}, Bucket: bucket, Region: "eu-west-1",
			Secret: corev1.SecretReference{Namespace: "garden", Name: "ref-backup-copy"}}
	}
	// named is a copy whose bucket copy.bucketName names.
	named := func(serve copystore.Serve, bucket string) *connect.CopyPlace {
		p := place(serve, bucket)
		p.Settings.BucketName = bucket
		return p
	}
	cases := []struct {
		name     string
		o        connect.ServeObserved
		fromCopy bool
		reason   string
		saying   string
		refused  bool
	}{
		{name: "no copy", o: connect.ServeObserved{Bucket: "b"}, reason: connect.ServeReasonPrimary},
		{name: "a copy, serve unset", o: connect.ServeObserved{Place: place("", "b-copy"), Bucket: "b"}, reason: connect.ServeReasonPrimary},
		{name: "a copy, serve primary", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b-copy"), Bucket: "b"}, reason: connect.ServeReasonPrimary},
		{name: "serve copy", o: connect.ServeObserved{Place: place(copystore.ServeCopy, "b-copy"), Bucket: "b", SeedProvider: "aws"},
			fromCopy: true, reason: connect.ServeReasonCopy, saying: `copy bucket "b-copy" in region "eu-west-1" with the copy's credentials (garden/ref-backup-copy)`},
		{name: "serve copy, namespace gone (no label)", o: connect.ServeObserved{Place: place(copystore.ServeCopy, "b-copy"), Bucket: "b"},
			fromCopy: true, reason: connect.ServeReasonCopy},
		{name: "serve copy, the copy is the entry's bucket", o: connect.ServeObserved{Place: place(copystore.ServeCopy, "b"), Bucket: "b"}, reason: connect.ServeReasonCopyIsSource},
		{name: "serve copy, a migration's source entry: its copy, as the live entry's", o: connect.ServeObserved{Place: place(copystore.ServeCopy, "b-copy"), Bucket: "b", SourceEntry: true, SeedProvider: "aws"},
			fromCopy: true, reason: connect.ServeReasonCopy, saying: `copy bucket "b-copy"`},
		{name: "serve primary, a migration's source entry", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b-copy"), Bucket: "b", SourceEntry: true}, reason: connect.ServeReasonPrimary},
		{name: "serve copy, a migration's source entry, copy.bucketName names this seed's copy: refused, not the stale primary", o: connect.ServeObserved{Place: named(copystore.ServeCopy, "c"), Bucket: "b", SourceEntry: true, SeedProvider: "aws"},
			reason: connect.ServeReasonRefused, refused: true, saying: `copy.serve: Forbidden: a migration's source entry of bucket "b"`},
		{name: "serve copy, a migration's source entry on a gcp seed", o: connect.ServeObserved{Place: place(copystore.ServeCopy, "b-copy"), Bucket: "b", SourceEntry: true, SeedProvider: "gcp"},
			reason: connect.ServeReasonRefused, refused: true, saying: `copy.serve: Forbidden`},
		{name: "serve copy on a gcp seed: provider-gcp's webhook would refuse the Etcd", o: connect.ServeObserved{Place: place(copystore.ServeCopy, "b-copy"), Bucket: "b", SeedProvider: "gcp"},
			reason: connect.ServeReasonRefused, refused: true, saying: `copy.serve: Forbidden`},
		{name: "serve primary on a gcp seed", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b-copy"), Bucket: "b", SeedProvider: "gcp"}, reason: connect.ServeReasonPrimary},
		// An automatic failover recorded on the BackupBucket (copy.failover).
		{name: "a recorded failover: the copy by policy", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b-copy"), Bucket: "b", SeedProvider: "aws", Failover: &connect.FailoverRecord{CopyBucket: "b-copy", Reason: "Unreachable"}},
			fromCopy: true, reason: connect.ServeReasonCopyByPolicy, saying: "automatic failover (copy.failover) was recorded"},
		{name: "a recorded failover on a gcp seed: refused as serve copy is", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b-copy"), Bucket: "b", SeedProvider: "gcp", Failover: &connect.FailoverRecord{CopyBucket: "b-copy"}},
			reason: connect.ServeReasonRefused, refused: true, saying: `copy.serve: Forbidden`},
		{name: "a recorded failover, serve copy set (adopted): the copy by configuration", o: connect.ServeObserved{Place: place(copystore.ServeCopy, "b-copy"), Bucket: "b", SeedProvider: "aws", Failover: &connect.FailoverRecord{CopyBucket: "b-copy"}},
			fromCopy: true, reason: connect.ServeReasonCopy},
		{name: "a recorded failover, no copy declared: the primary", o: connect.ServeObserved{Bucket: "b", Failover: &connect.FailoverRecord{CopyBucket: "b-copy"}},
			reason: connect.ServeReasonPrimary},
		// The flip-back guard: copy.serve primary while etcd-backup names the copy bucket.
		{name: "serve primary, etcd-backup names the copy, not copied back: stays on the copy", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b-copy"), Bucket: "b", FlipBack: connect.FlipBackObserved{NamesCopy: true, WritesCopy: true}},
			fromCopy: true, reason: connect.ServeReasonCopyingBack, saying: `keeps naming the copy bucket "b-copy" in region "eu-west-1" with the copy's credentials (garden/ref-backup-copy) until the snapshots the shoot wrote there are copied back into bucket "b"`},
		{name: "serve unset, etcd-backup names the copy, not copied back", o: connect.ServeObserved{Place: place("", "b-copy"), Bucket: "b", FlipBack: connect.FlipBackObserved{NamesCopy: true, WritesCopy: true}},
			fromCopy: true, reason: connect.ServeReasonCopyingBack},
		{name: "serve primary, etcd-backup names the copy, copied back: the primary", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b-copy"), Bucket: "b", FlipBack: connect.FlipBackObserved{NamesCopy: true, WritesCopy: true, CopiedBack: true}},
			reason: connect.ServeReasonPrimary},
		{name: "serve primary, etcd-backup names the copy, the switch was pending (the shoot writes the primary): the primary", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b-copy"), Bucket: "b", FlipBack: connect.FlipBackObserved{NamesCopy: true}},
			reason: connect.ServeReasonPrimary},
		{name: "serve primary, etcd-backup names the primary again, the shoot still writes the copy (Etcd not rolled), a catch-up copying back: not guarded again", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b-copy"), Bucket: "b", FlipBack: connect.FlipBackObserved{WritesCopy: true}},
			reason: connect.ServeReasonPrimary},
		{name: "serve primary, etcd-backup names the primary (a stale CopiedBack): the primary", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b-copy"), Bucket: "b", FlipBack: connect.FlipBackObserved{CopiedBack: true}},
			reason: connect.ServeReasonPrimary},
		{name: "serve primary, a migration's source entry naming the copy: not guarded (the live entry copies back)", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b-copy"), Bucket: "b", SourceEntry: true, FlipBack: connect.FlipBackObserved{NamesCopy: true, WritesCopy: true}},
			reason: connect.ServeReasonPrimary},
		{name: "serve primary, the copy is the entry's bucket: nothing to copy back", o: connect.ServeObserved{Place: place(copystore.ServePrimary, "b"), Bucket: "b", FlipBack: connect.FlipBackObserved{NamesCopy: true, WritesCopy: true}},
			reason: connect.ServeReasonPrimary},
		{name: "no copy declared any more, etcd-backup names the old copy: the primary (no copy to serve from)", o: connect.ServeObserved{Bucket: "b", FlipBack: connect.FlipBackObserved{NamesCopy: true, WritesCopy: true}},
			reason: connect.ServeReasonPrimary},
		{name: "serve copy, a CopiedBack recorded: the copy", o: connect.ServeObserved{Place: place(copystore.ServeCopy, "b-copy"), Bucket: "b", SeedProvider: "aws", FlipBack: connect.FlipBackObserved{NamesCopy: true, WritesCopy: true, CopiedBack: true}},
			fromCopy: true, reason: connect.ServeReasonCopy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := connect.DecideServe(c.o)
			if got.FromCopy != c.fromCopy || got.Reason != c.reason || !strings.Contains(got.Message, c.saying) || (got.Refused != nil) != c.refused {
				t.Fatalf("got %+v; want fromCopy %v, reason %s, saying %q, refused %v", got, c.fromCopy, c.reason, c.saying, c.refused)
			}
			if c.refused && !errors.Is(got.Refused, objectstore.ErrInvalidConfig) {
				t.Fatalf("refusal %v is not a configuration problem", got.Refused)
			}
		})
	}
}
