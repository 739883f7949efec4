// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
)

// sweepSide is one entry issuer with what a test needs to see what a sweep leaves.
type sweepSide struct {
	name string
	// start builds the issuer; principals lists what of bucket's principals there is, sorted:
	// "<prefix> <access>" per principal and, for MinIO, "user" and "policy" while the parent
	// and its policy exist.
	start func(t *testing.T) (iss objectstore.EntryCredentialIssuer, principals func(bucket string) []string, interrupt func(bucket string))
}

func sweepSides() []sweepSide {
	return []sweepSide{
		{name: "MinIO", start: func(t *testing.T) (objectstore.EntryCredentialIssuer, func(string) []string, func(string)) {
			admin, err := minio.Admin()
			if err != nil {
				t.Fatal(err)
			}
			principals := func(bucket string) []string {
				left, err := minio.Leftovers(context.Background(), awsprovider.MinIOEntryParent(bucket), "gardener-backup-entries-"+bucket)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, l := range left {
					d := strings.TrimPrefix(l, "gardener-extension-backup bucket="+bucket+" prefix=")
					out = append(out, strings.Replace(d, " access=", " ", 1))
				}
				slices.Sort(out)
				return out
			}
			// A sweep interrupted between the parent's removal and its policy's leaves the
			// policy: the parent goes by hand (its service accounts with it, as MinIO does).
			interrupt := func(bucket string) {
				if err := admin.RemoveUser(context.Background(), awsprovider.MinIOEntryParent(bucket)); err != nil {
					t.Fatal(err)
				}
				if got := principals(bucket); !slices.Equal(got, []string{"policy"}) {
					t.Fatalf("after the parent's removal by hand: %v; want only its policy left", got)
				}
			}
			return newEntryIssuer(t, &awsprovider.Provider{}, minio.SecretData(), awsapi.IssuerMinIO), principals, interrupt
		}},
		{name: "IAM", start: func(t *testing.T) (objectstore.EntryCredentialIssuer, func(string) []string, func(string)) {
			stand, iss := startIAMIssuer(t)
			principals := func(bucket string) []string {
				var out []string
				for _, u := range stand.Users() {
					if tags := stand.Tags(u); tags["gardener-backup-bucket"] == bucket {
						out = append(out, tags["gardener-backup-prefix"]+" "+tags["gardener-backup-access"])
					}
				}
				slices.Sort(out)
				return out
			}
			// A sweep refused DeleteUser stops after users' keys and policies, before the users.
			interrupt := func(bucket string) {
				stand.Deny("DeleteUser")
				defer stand.Deny()
				if _, err := iss.SweepEntryCredentials(context.Background(), bucket, objectstore.EntrySweep{}); !errors.Is(err, objectstore.ErrForbidden) {
					t.Fatalf("a sweep refused DeleteUser: %v; want ErrForbidden", err)
				}
				emptied := 0
				for _, u := range stand.Users() {
					if policies, keys, _ := stand.User(u); stand.Tags(u)["gardener-backup-bucket"] == bucket && len(policies) == 0 && len(keys) == 0 {
						emptied++
					}
				}
				if emptied == 0 {
					t.Fatal("no user of the bucket without keys and policy after the interrupted sweep; want it stopped between them and the user")
				}
			}
			return iss, principals, interrupt
		}},
	}
}

func mustEntryPrefix(t *testing.T, name string) objectstore.Prefix {
	t.Helper()
	p, err := objectstore.EntryPrefix(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// createVersionedBucket creates bucket on MinIO with versioning, as the BackupBucket controller
// does.
func createVersionedBucket(t *testing.T, bucket string) {
	t.Helper()
	ctx, root := context.Background(), minio.S3Client()
	if _, err := root.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket, CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: "eu-central-1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &bucket, VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
}

// TestEntryCredentialSweep: on bucket b1, an entry that lives, one force-deleted (its principal
// left), a source- entry's read-only principal and a migrated entry's retiring one, beside the
// neighbours b (a prefix of b1's name) and b1x (b1's name a prefix of it). The switch-off sweep
// takes only the force-deleted entry's; the sweeps of b1x and b leave b1's; the deletion sweep of
// b1, interrupted first, leaves nothing of b1 and b's new principal untouched.
func TestEntryCredentialSweep(t *testing.T) {
	for _, side := range sweepSides() {
		t.Run(side.name, func(t *testing.T) {
			ctx := context.Background()
			iss, principals, interrupt := side.start(t)
			b := newBucketName()
			b1, b1x := b+"1", b+"1x"
			for _, name := range []string{b, b1, b1x} {
				createVersionedBucket(t, name)
			}
			live, gone, moved, migrated := mustEntryPrefix(t, "shoot--p--live"), mustEntryPrefix(t, "shoot--p--gone"), mustEntryPrefix(t, "shoot--p--moved"), mustEntryPrefix(t, "shoot--p--migrated")
			issue := func(bucket string, p objectstore.Prefix, access objectstore.EntryAccess) objectstore.Credential {
				t.Helper()
				c, err := iss.IssueEntryCredential(ctx, bucket, p, access, nil)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			works := func(c objectstore.Credential, bucket string, p objectstore.Prefix) bool {
				t.Helper()
				_, err := s3Of(t, c.Data).ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String(p.String())})
				return err == nil
			}
			liveCred, goneCred := issue(b1, live, objectstore.EntryReadWrite), issue(b1, gone, objectstore.EntryReadWrite)
			movedCred, migratedCred := issue(b1, moved, objectstore.EntryReadOnly), issue(b1, migrated, objectstore.EntryReadWrite)
			if err := iss.RetireEntryCredentials(ctx, b1, migrated, objectstore.EntryReadWrite, []string{migratedCred.ID}, time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			issue(b, live, objectstore.EntryReadWrite)
			issue(b1x, live, objectstore.EntryReadWrite)
			parent := map[string][]string{"MinIO": {"policy", "user"}}[side.name]
			with := func(ps ...string) []string { out := append(ps, parent...); slices.Sort(out); return out }

			// Switched off: only the force-deleted entry's principal goes.
			kept, err := iss.SweepEntryCredentials(ctx, b1, objectstore.EntrySweep{Live: []objectstore.Prefix{live}, KeepReadOnly: true, KeepRetiring: true})
			want := with(live.String()+" read-write", migrated.String()+" read-write", moved.String()+" read-only")
			if got := principals(b1); err != nil || kept != 3 || !slices.Equal(got, want) {
				t.Fatalf("switch-off sweep: kept %d, %v; left %v; want 3 kept: %v", kept, err, got, want)
			}
			if works(goneCred, b1, gone) || !works(liveCred, b1, live) || !works(movedCred, b1, moved) || !works(migratedCred, b1, migrated) {
				t.Fatal("after the switch-off sweep: want the force-deleted entry's credential refused, the others working")
			}

			// The buckets b1x and b deleted: b1's principals are not theirs.
			for _, other := range []string{b1x, b} {
				if kept, err := iss.SweepEntryCredentials(ctx, other, objectstore.EntrySweep{}); err != nil || kept != 0 || len(principals(other)) != 0 {
					t.Fatalf("deletion sweep of %s: kept %d, %v; left %v; want nothing", other, kept, err, principals(other))
				}
			}
			if got := principals(b1); !slices.Equal(got, want) || !works(liveCred, b1, live) {
				t.Fatalf("bucket b1 after the sweeps of b1x and b: %v; want %v untouched and working", got, want)
			}

			// b1 deleted, its sweep interrupted and run again: nothing of b1 is left.
			neighbour := issue(b, live, objectstore.EntryReadWrite)
			interrupt(b1)
			if kept, err := iss.SweepEntryCredentials(ctx, b1, objectstore.EntrySweep{}); err != nil || kept != 0 {
				t.Fatalf("deletion sweep of b1 after an interrupted one: kept %d, %v", kept, err)
			}
			if got := principals(b1); len(got) != 0 {
				t.Fatalf("left of b1 after its deletion sweep: %v; want nothing", got)
			}
			if works(liveCred, b1, live) || works(movedCred, b1, moved) || works(migratedCred, b1, migrated) {
				t.Fatal("a credential of b1 works after its deletion sweep")
			}
			if got := principals(b); !slices.Equal(got, with(live.String()+" read-write")) || !works(neighbour, b, live) {
				t.Fatalf("neighbour b after b1's deletion sweep: %v; want its principal untouched and working", got)
			}
			// Run again: nothing to do, still success.
			if kept, err := iss.SweepEntryCredentials(ctx, b1, objectstore.EntrySweep{}); err != nil || kept != 0 {
				t.Fatalf("a sweep with nothing left: kept %d, %v", kept, err)
			}
		})
	}
}

// TestIAMEntrySweepCost counts what one sweep costs in an account with IAM's 5,000 users, all of
// them entry users of another bucket: ListUsers in pages of 1,000 and one ListUserTags per entry
// user, nothing deleted. The time is logged, not asserted.
func TestIAMEntrySweepCost(t *testing.T) {
	const users = 5000
	stand := startEnforcedIAM(t)
	other := newBucketName()
	for i := range users {
		p := mustEntryPrefix(t, "shoot--p--"+strconv.Itoa(i))
		stand.CreateUserWithTags(awsprovider.IAMEntryUserName(other, p, objectstore.EntryReadWrite), map[string]string{
			"managed-by": "gardener-extension-backup", "gardener-backup-bucket": other, "gardener-backup-prefix": p.String(), "gardener-backup-access": "read-write"})
	}
	iss := newEntryIssuer(t, &awsprovider.Provider{IAMEndpoint: stand.URL}, minio.SecretData(), awsapi.IssuerIAM)
	before := len(stand.Actions())
	start := time.Now()
	kept, err := iss.SweepEntryCredentials(context.Background(), newBucketName(), objectstore.EntrySweep{})
	took := time.Since(start)
	if err != nil || kept != 0 {
		t.Fatalf("sweep: kept %d, %v", kept, err)
	}
	count := map[string]int{}
	for _, a := range stand.Actions()[before:] {
		count[a]++
	}
	if count["ListUsers"] != users/1000 || count["ListUserTags"] != users || len(count) != 2 || len(stand.Users()) != users {
		t.Fatalf("requests %v, %d users left; want %d ListUsers pages, %d ListUserTags, nothing else, nothing deleted", count, len(stand.Users()), users/1000, users)
	}
	t.Logf("one sweep of an account with %d entry users: %v requests in %s on the stand-in", users, count, took)
}
