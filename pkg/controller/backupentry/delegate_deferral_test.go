// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestDeferralWithoutBackupBucketOnTheSeed: a source- entry of a migration lives on the
// destination seed, its bucket's BackupBucket on the source seed. Its deferral completes with
// its own credentials where the store allows it; where they cannot, the answer says that the
// BackupBucket is not on this seed and what the operator can do, keeps the store's error class,
// and nothing is reported deferred.
func TestDeferralWithoutBackupBucketOnTheSeed(t *testing.T) {
	cases := []struct {
		name      string
		deferral  objectstore.Deferral
		err       error
		wantErr   error    // nil: Delete succeeds unless wantText is set
		wantText  []string // in the error
		wantEvent string   // the first event's reason
	}{
		{name: "the entry's own credentials complete it", deferral: objectstore.Deferral{Rule: "lifecycle rule tagged"}, wantEvent: backupentry.ReasonLockedObjectsDeferred},
		{name: "the entry's credentials may not put the rule in place",
			err: fmt.Errorf("bucket %q: lifecycle rule missing: %w", "bucket", objectstore.ErrForbidden), wantErr: objectstore.ErrForbidden,
			wantText: []string{`BackupBucket "bucket" is not on this seed`, "reconcile the BackupBucket on its seed", "lifecycle rule missing"}},
		{name: "the entry's credentials cannot read the rule back",
			err:      fmt.Errorf("an account key cannot read the rule: %w", objectstore.ErrUnsupported),
			wantText: []string{"cannot be emptied", `BackupBucket "bucket" is not on this seed`, "an account key cannot read the rule"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			mem := controllertest.Bucket(t, "bucket", "shoot--a--b--1/full")
			mem.Lock("bucket", "shoot--a--b--1/full", time.Now().Add(time.Hour))
			asked := 0
			store := deferringStore{Store: mem, deferral: c.deferral, err: c.err, asked: &asked}
			recorder := events.NewFakeRecorder(10)
			// The seed's client holds the entry's secret and no BackupBucket.
			d := backupentry.NewDelegate(provider.Register(controllertest.Provider{Store: store}), controllertest.Client(), recorder, options.DeletionOptions{})
			be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "source-shoot--a--b--1"},
				Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: "bucket", SecretRef: controllertest.SecretRef}}
			err := d.Delete(ctx, logr.Discard(), be)
			if asked != 1 {
				t.Fatalf("DeferDeletion asked %d times; want once, with the entry's credentials", asked)
			}
			switch {
			case c.wantErr == nil && len(c.wantText) == 0 && err != nil:
				t.Fatalf("Delete = %v; want the deferral done with the entry's own credentials", err)
			case c.wantErr != nil && !errors.Is(err, c.wantErr):
				t.Fatalf("Delete = %v; want an error matching %v", err, c.wantErr)
			}
			for _, text := range c.wantText {
				if err == nil || !strings.Contains(err.Error(), text) {
					t.Errorf("Delete = %v; want it to say %q", err, text)
				}
			}
			select {
			case event := <-recorder.Events:
				if c.wantEvent == "" || !strings.Contains(event, c.wantEvent) {
					t.Fatalf("event %q; want %q", event, c.wantEvent)
				}
			default:
				if c.wantEvent != "" {
					t.Fatalf("no event; want %s", c.wantEvent)
				}
			}
		})
	}
}
