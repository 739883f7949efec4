// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Every state of the bucket deletion's sweep of its entries' principals as a row of the pure
// decisions: where it sweeps (decideDeletionSweep), whether an issuer the operator's credentials
// cannot build leaves anything to sweep (decideUnbuiltIssuer), and whether the deletion goes on
// after the sweeps (decideDeletionSwept). On the actuator: TestEntryCredentialSweepsOfTheBucket's
// "deleted" cases.
func TestDecideBucketDeletionSweep(t *testing.T) {
	moves := entryIssuers{"MinIO": {"http://minio", "http://minio-new"}}
	two := entryIssuers{"MinIO": {"http://minio"}, "IAM": {"arn:aws:iam::1:root"}}
	unreadable := fmt.Errorf("%w: annotation %s is not a record", objectstore.ErrInvalidConfig, AnnotationEntryIssuers)
	sweeps := []struct {
		name string
		o    deletionSweepObserved
		// want lists the sweeps, issuer@place, "(unrecorded)" after the configured issuer's
		// place on no record.
		want string
		// err says what the refusal must say ("" no error).
		err string
	}{
		{name: "bucket deletion, nothing recorded, off: nothing swept", want: ""},
		{name: "bucket deletion, nothing recorded, an issuer configured: swept wherever the operator's credentials reach",
			o: deletionSweepObserved{configured: "IAM"}, want: "IAM@(unrecorded)"},
		{name: "bucket deletion, another issuer recorded, the configured one not: both swept, the configured one wherever the operator's credentials reach, unrecorded",
			o: deletionSweepObserved{record: entryIssuers{"MinIO": {"http://minio"}}, configured: "IAM"}, want: "IAM@(unrecorded) MinIO@http://minio"},
		{name: "bucket deletion: every recorded issuer swept, the configured one at its recorded place only",
			o: deletionSweepObserved{record: two, configured: "MinIO"}, want: "IAM@arn:aws:iam::1:root MinIO@http://minio"},
		{name: "bucket deletion, issue 44 finding 8: an issuer that issued in two places (the operator's credentials moved): both swept",
			o: deletionSweepObserved{record: moves, configured: "MinIO"}, want: "MinIO@http://minio MinIO@http://minio-new"},
		{name: "bucket deletion: a place the operator removed by hand is not swept",
			o: deletionSweepObserved{record: moves, removed: entryIssuers{"MinIO": {"http://minio"}}}, want: "MinIO@http://minio-new"},
		{name: "bucket deletion, nothing recorded, the configured issuer's principals removed by hand wherever it reaches: nothing swept",
			o: deletionSweepObserved{configured: "IAM", removed: entryIssuers{"IAM": {""}}}, want: ""},
		{name: "bucket deletion, the record unreadable: nothing swept, the deletion waits naming the annotation (the record is never dropped unswept)",
			o: deletionSweepObserved{record: two, unreadable: unreadable, configured: "IAM"}, err: AnnotationEntryIssuers},
	}
	for _, c := range sweeps {
		t.Run(c.name, func(t *testing.T) {
			places, err := decideDeletionSweep(c.o)
			var got []string
			for _, p := range places {
				w := p.Issuer + "@" + p.Place
				if p.unrecorded {
					w += "(unrecorded)"
				}
				got = append(got, w)
			}
			if strings.Join(got, " ") != c.want {
				t.Fatalf("sweeps %q; want %q", got, c.want)
			}
			if c.err == "" {
				if err != nil {
					t.Fatalf("error %v; want none", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, objectstore.ErrInvalidConfig) {
				t.Fatalf("error %v; want ERR_CONFIGURATION_PROBLEM saying %q", err, c.err)
			}
		})
	}

	// Issue 44, review of the deletion's sweep: an issuer the configuration cannot build (issuer
	// minio against an endpoint that is not MinIO) never issued at a place not on record; the
	// deletion waited for the operator's word on principals that never existed.
	invalid := fmt.Errorf("credentials secret garden/s, entry issuer %q: %w", "MinIO", objectstore.Invalidf("the endpoint is not MinIO"))
	unsupported := fmt.Errorf("entry issuer IAM: %w", objectstore.ErrUnsupported)
	forbidden := fmt.Errorf("reading the account: %w", objectstore.ErrForbidden)
	unbuilt := []struct {
		name     string
		mode     entrySweepMode
		built    bool
		buildErr error
		nothing  bool
	}{
		{name: "bucket deletion, the configured issuer unrecorded, the configuration cannot build it: nothing to sweep", mode: sweepDeletedUnrecorded, buildErr: invalid, nothing: true},
		{name: "bucket deletion, the configured issuer unrecorded, the store has no such issuer: nothing to sweep", mode: sweepDeletedUnrecorded, buildErr: unsupported, nothing: true},
		{name: "bucket deletion, the configured issuer unrecorded, the credentials build no such issuer: nothing to sweep", mode: sweepDeletedUnrecorded, nothing: true},
		{name: "bucket deletion, the configured issuer unrecorded and built: swept", mode: sweepDeletedUnrecorded, built: true},
		{name: "bucket deletion, the configured issuer unrecorded, its build refused (no rights): not known to have issued nothing, the sweep reports it", mode: sweepDeletedUnrecorded, buildErr: forbidden},
		{name: "bucket deletion, the configured issuer unrecorded, its build failed transiently: retried", mode: sweepDeletedUnrecorded, buildErr: errors.New("connection reset")},
		{name: "bucket deletion, a recorded place whose issuer cannot be built: it did issue there, the sweep reports it", mode: sweepDeleted, buildErr: invalid},
		{name: "bucket deletion, a recorded place whose issuer is built no more: the sweep reports it", mode: sweepDeleted},
		{name: "hand-back, an issuer that cannot be built: the sweep reports it", mode: sweepHandBack, buildErr: invalid},
		{name: "reconcile's sweep of orphans, an issuer that cannot be built: the sweep reports it", mode: sweepOrphans, buildErr: invalid},
	}
	for _, c := range unbuilt {
		t.Run(c.name, func(t *testing.T) {
			if got := decideUnbuiltIssuer(c.mode, c.built, c.buildErr); got != c.nothing {
				t.Fatalf("nothing to sweep = %t; want %t", got, c.nothing)
			}
		})
	}

	swept := []struct {
		name string
		left []string
		say  []string
	}{
		{name: "bucket deletion, every sweep done: the deletion goes on"},
		{name: "bucket deletion, sweeps left principals (a store's refusal, credentials that reach another place now): the deletion waits naming each",
			left: []string{"issuer IAM in arn:aws:iam::1:root: the store refused the sweep", "issuer MinIO in http://minio: the operator's credentials now reach http://minio-new"},
			say:  []string{"is not deleted", "the store refused the sweep", "now reach http://minio-new"}},
	}
	for _, c := range swept {
		t.Run(c.name, func(t *testing.T) {
			err := decideDeletionSwept("b", c.left)
			if len(c.say) == 0 {
				if err != nil {
					t.Fatalf("error %v; want the deletion to go on", err)
				}
				return
			}
			if err == nil || !errors.Is(err, objectstore.ErrInvalidConfig) {
				t.Fatalf("error %v; want ERR_CONFIGURATION_PROBLEM", err)
			}
			for _, s := range c.say {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}
