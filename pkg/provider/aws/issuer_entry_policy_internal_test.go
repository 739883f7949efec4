// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// etcdBackupRestoreS3Calls is every S3 call etcd-backup-restore v0.44.1 makes
// (pkg/snapstore/s3_snapstore.go of its module) and the actions AWS authorizes it with (its
// "Required permissions for Amazon S3 API operations" and each operation's API reference). The
// table in docs/entry-credentials.md gives the line of each; MinIO does not tell some of these
// actions apart (s3:GetObjectTagging from s3:GetObjectVersionTagging), so only this check sees
// them.
var etcdBackupRestoreS3Calls = []struct {
	call     string
	bucket   bool // on the bucket's ARN, else on an object's
	readOnly bool // a restore does it (a source- entry's read-only credential needs it)
	actions  []string
}{
	{"ListObjectsV2 (List)", true, true, []string{"s3:ListBucket"}},
	{"ListObjectVersions (List, versioned bucket)", true, true, []string{"s3:ListBucketVersions"}},
	{"GetBucketVersioning", true, true, []string{"s3:GetBucketVersioning"}},
	{"GetObjectLockConfiguration", true, true, []string{"s3:GetBucketObjectLockConfiguration"}},
	{"GetObject (Fetch)", false, true, []string{"s3:GetObject"}},
	{"GetObject with VersionId (Fetch, versioned)", false, true, []string{"s3:GetObjectVersion"}},
	{"GetObjectTagging with VersionId (IsSnapshotMarkedToBeIgnored)", false, true, []string{"s3:GetObjectTagging", "s3:GetObjectVersionTagging"}},
	{"CreateMultipartUpload", false, false, []string{"s3:PutObject"}},
	{"UploadPart", false, false, []string{"s3:PutObject"}},
	{"CompleteMultipartUpload", false, false, []string{"s3:PutObject"}},
	{"AbortMultipartUpload", false, false, []string{"s3:AbortMultipartUpload"}},
	{"DeleteObject (Delete)", false, false, []string{"s3:DeleteObject"}},
	{"DeleteObject with VersionId (Delete, versioned)", false, false, []string{"s3:DeleteObjectVersion"}},
}

// The entry policy allows every action an etcd-backup-restore call needs, on the resource AWS
// checks it on, and no action that no call needs.
func TestEntryPolicyAllowsExactlyWhatEtcdBackupRestoreCalls(t *testing.T) {
	const bucket = "b"
	prefix, err := objectstore.EntryPrefix("shoot--p--a--uid1")
	if err != nil {
		t.Fatal(err)
	}
	for _, access := range []objectstore.EntryAccess{objectstore.EntryReadWrite, objectstore.EntryReadOnly} {
		doc, err := entryPolicy(bucket, prefix, access)
		if err != nil {
			t.Fatal(err)
		}
		var policy struct {
			Statement []struct {
				Resource []string
				Action   []string
			}
		}
		if err := json.Unmarshal(doc, &policy); err != nil {
			t.Fatal(err)
		}
		allowed := map[string]bool{} // "resource action"
		for _, s := range policy.Statement {
			for _, r := range s.Resource {
				for _, a := range s.Action {
					allowed[r+" "+a] = true
				}
			}
		}
		needed := map[string]bool{}
		for _, c := range etcdBackupRestoreS3Calls {
			if access == objectstore.EntryReadOnly && !c.readOnly {
				continue
			}
			resource := "arn:aws:s3:::" + bucket + "/" + prefix.String() + "*"
			if c.bucket {
				resource = "arn:aws:s3:::" + bucket
			}
			for _, a := range c.actions {
				needed[resource+" "+a] = true
				if !allowed[resource+" "+a] {
					t.Errorf("%s: %s needs %s on %s; the policy does not allow it", access, c.call, a, resource)
				}
			}
		}
		for ra := range allowed {
			if !needed[ra] {
				t.Errorf("%s: the policy allows %q, which no call of etcd-backup-restore needs", access, ra)
			}
		}
		if !slices.Contains(policy.Statement[2].Action, "s3:GetObjectVersionTagging") {
			t.Errorf("%s: no s3:GetObjectVersionTagging: an excluded snapshot would be restored", access)
		}
	}
}
