// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package connect_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// TestDecideEtcdBackup: bucketName follows the serve decision, the credentials the bucket the
// shoot's Etcd names now, over every observation.
func TestDecideEtcdBackup(t *testing.T) {
	const primary, copyBucket = "b", "b-copy"
	etcd := func(fromCopy bool, container string) connect.EtcdBackupObserved {
		return connect.EtcdBackupObserved{FromCopy: fromCopy, Bucket: primary, CopyBucket: copyBucket, EtcdFound: true, EtcdContainer: container}
	}
	noEtcd := func(fromCopy bool) connect.EtcdBackupObserved {
		return connect.EtcdBackupObserved{FromCopy: fromCopy, Bucket: primary, CopyBucket: copyBucket}
	}
	unusable := func(o connect.EtcdBackupObserved) connect.EtcdBackupObserved {
		o.HeldErr = fmt.Errorf(`bucket "b": %w`, objectstore.ErrBucketNotFound)
		return o
	}
	failing := func(o connect.EtcdBackupObserved, err error) connect.EtcdBackupObserved {
		o.HeldErr = err
		return o
	}
	failedOver := func(o connect.EtcdBackupObserved) connect.EtcdBackupObserved {
		o.HeldErr, o.HeldFailedOver = fmt.Errorf("bucket %q: %w", "b", objectstore.ErrUnreachable), true
		return o
	}
	cases := []struct {
		name                  string
		o                     connect.EtcdBackupObserved
		bucketCopy, credsCopy bool
		pending               bool
		saying                string
		err                   error // the reconcile fails with it, etcd-backup left as it is
	}{
		{name: "no copy declared", o: connect.EtcdBackupObserved{Bucket: primary, EtcdFound: true, EtcdContainer: primary}},
		{name: "no copy declared, the Etcd on another bucket", o: connect.EtcdBackupObserved{Bucket: primary, EtcdFound: true, EtcdContainer: "x"}},
		{name: "the copy is the entry's bucket", o: connect.EtcdBackupObserved{FromCopy: false, Bucket: primary, CopyBucket: primary, EtcdFound: true, EtcdContainer: primary}},
		{name: "primary served, the Etcd on the primary", o: etcd(false, primary), saying: "the Etcd names it too"},
		{name: "phase 1: copy served, the Etcd on the primary", o: etcd(true, primary), bucketCopy: true, pending: true,
			saying: `switch pending: the Etcd still names bucket "b"; etcd-backup names bucket "b-copy" but keeps the credentials of bucket "b"`},
		{name: "phase 2: copy served, the Etcd on the copy", o: etcd(true, copyBucket), bucketCopy: true, credsCopy: true},
		{name: "copy served, no Etcd", o: noEtcd(true), bucketCopy: true, credsCopy: true, saying: "no Etcd"},
		{name: "primary served, no Etcd", o: noEtcd(false), saying: "no Etcd"},
		{name: "copy served, the Etcd names neither", o: etcd(true, "other"), bucketCopy: true, credsCopy: true, saying: `"other", neither`},
		{name: "primary served, the Etcd names neither", o: etcd(false, "other"), saying: "neither"},
		{name: "coming back: primary served, the Etcd on the copy", o: etcd(false, copyBucket), credsCopy: true, pending: true,
			saying: `switch pending: the Etcd still names bucket "b-copy"; etcd-backup names bucket "b" but keeps the credentials of bucket "b-copy"`},
		{name: "back: primary served, the Etcd on the primary", o: etcd(false, primary)},
		{name: "phase 1, the primary's bucket gone", o: unusable(etcd(true, primary)), bucketCopy: true, credsCopy: true,
			saying: `at once: the Etcd still names bucket "b", but its credentials cannot be used (bucket "b": bucket not found)`},
		{name: "phase 1, the primary's credentials refused", o: failing(etcd(true, primary), objectstore.ErrForbidden), bucketCopy: true, credsCopy: true, saying: "at once"},
		{name: "phase 1, the primary's credentials unknown to it", o: failing(etcd(true, primary), objectstore.ErrUnauthenticated), bucketCopy: true, credsCopy: true, saying: "at once"},
		{name: "coming back, the copy's secret missing", o: failing(etcd(false, copyBucket), objectstore.Invalidf("the copy's credentials secret is missing")), saying: "at once"},
		{name: "phase 1, a failover from the primary recorded, the primary unreachable", o: failedOver(etcd(true, primary)), bucketCopy: true, credsCopy: true,
			saying: "an automatic failover from it is recorded"},
		{name: "phase 1, the primary unreachable once: the reconcile fails", o: failing(etcd(true, primary), objectstore.ErrUnreachable), bucketCopy: true, pending: true, err: objectstore.ErrUnreachable},
		{name: "phase 1, the primary throttled: the reconcile fails", o: failing(etcd(true, primary), objectstore.ErrThrottled), bucketCopy: true, pending: true, err: objectstore.ErrThrottled},
		{name: "phase 1, the primary stalled: the reconcile fails", o: failing(etcd(true, primary), httpclient.ErrStalled), bucketCopy: true, pending: true, err: httpclient.ErrStalled},
		{name: "coming back, the copy unreachable: the reconcile fails", o: failing(etcd(false, copyBucket), objectstore.ErrUnreachable), credsCopy: true, pending: true, err: objectstore.ErrUnreachable},
		{name: "coming back, the copy unusable", o: unusable(etcd(false, copyBucket))},
		{name: "phase 2 ignores an unusable note", o: unusable(etcd(true, copyBucket)), bucketCopy: true, credsCopy: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := connect.DecideEtcdBackup(c.o)
			if got.BucketFromCopy != c.bucketCopy || got.CredentialsFromCopy != c.credsCopy || got.Pending() != c.pending {
				t.Errorf("bucket from copy %v, credentials from copy %v, pending %v; want %v, %v, %v (%s)",
					got.BucketFromCopy, got.CredentialsFromCopy, got.Pending(), c.bucketCopy, c.credsCopy, c.pending, got.Message)
			}
			if !errors.Is(got.Err, c.err) || (c.err == nil) != (got.Err == nil) {
				t.Errorf("error %v; want %v", got.Err, c.err)
			}
			if !strings.Contains(got.Message, c.saying) {
				t.Errorf("message %q; want it saying %q", got.Message, c.saying)
			}
		})
	}
}
