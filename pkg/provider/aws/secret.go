// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"crypto/md5" //nolint:gosec // S3's SSE-C headers carry an MD5 of the key
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	smithyhttp "github.com/aws/smithy-go/transport/http"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/validation"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// Secret data keys: the names etcd-backup-restore reads, so that they reach etcd-backup unchanged.
const (
	KeyAccessKeyID        = "accessKeyID"
	KeySecretAccessKey    = "secretAccessKey"
	KeyRegion             = "region"
	KeyEndpoint           = "endpoint"
	KeyS3ForcePathStyle   = "s3ForcePathStyle"
	KeyTrustedCACert      = "trustedCaCert"
	KeyInsecureSkipVerify = "insecureSkipVerify"
	KeyRoleARN            = "roleARN"
	KeyToken              = "token"
	KeyConfig             = "config"
	KeyBucketName         = "bucketName"
	// SSE-C (a customer-provided encryption key) and the SDK's checksum modes, which
	// etcd-backup-restore reads from the same directory (readAWSCredentialFromDir, s3_snapstore.go:333-364 of v0.43.0 and
	// v0.44.1, which do not differ there).
	KeySSECustomerKey             = "sseCustomerKey"
	KeySSECustomerAlgorithm       = "sseCustomerAlgorithm"
	KeyRequestChecksumCalculation = "requestChecksumCalculation"
	KeyResponseChecksumValidation = "responseChecksumValidation"
)

// validateRegion refuses a region the S3 SDK (the extension's and etcd-backup-restore's) refuses
// before any request ("invalid input region", without a code): dot-separated host labels of
// letters, digits and dashes, none beginning or ending with a dash. A trailing newline is the
// usual culprit.
func validateRegion(region string, fromSecret bool) error {
	valid := true
	for _, label := range strings.Split(region, ".") {
		if !smithyhttp.ValidHostLabel(label) || label[0] == '-' || label[len(label)-1] == '-' {
			valid = false
			break
		}
	}
	if valid {
		return nil
	}
	source := "spec.region"
	if fromSecret {
		source = fmt.Sprintf("the secret key %q", KeyRegion)
	}
	return objectstore.Invalidf("the region %q (%s) is not one the S3 SDK accepts: letters, digits and dashes in dot-separated labels that do not begin or end with a dash, without spaces or control characters", region, source)
}

// boolKey parses an optional boolean secret key as etcd-backup-restore v0.43.0 does
// (strconv.ParseBool on the value as it is: true, false, 1, 0, t, f, TRUE, ...; no whitespace).
func boolKey(d map[string][]byte, key string) (bool, error) {
	v, ok := d[key]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(string(v))
	if err != nil {
		return false, objectstore.Invalidf("secret key %q must be true or false (as strconv.ParseBool reads it, without spaces or a newline)", key)
	}
	return b, nil
}

// validateCABundle refuses a trustedCaCert without a usable certificate: etcd-backup-restore
// v0.43.0 trusts only the certificates of this key when it is present (not the system's), so an
// empty or unparseable bundle would make every TLS connection of the sidecar fail.
func validateCABundle(d map[string][]byte) error {
	pem, ok := d[KeyTrustedCACert]
	if !ok {
		return nil
	}
	if len(pem) == 0 {
		return objectstore.Invalidf("secret key %q is empty: remove it, or put a PEM CA bundle in it (etcd-backup-restore would trust no CA at all)", KeyTrustedCACert)
	}
	return httpclient.CheckCA(pem, KeyTrustedCACert)
}

// validateEndpoint refuses an endpoint neither the SDK nor etcd-backup-restore can use. Its value
// is never shown: an endpoint may hold credentials. An empty value means no endpoint (AWS's own)
// for both, as if the key were absent.
func validateEndpoint(d map[string][]byte) error {
	raw := string(d[KeyEndpoint])
	if raw == "" {
		return nil
	}
	return validation.URL(KeyEndpoint, raw, "https://s3.example.com:9000", "the credentials belong in accessKeyID and secretAccessKey")
}

// etcdBackupKeys are the keys of the entry secret that etcd-backup-restore reads and that are
// passed through unchanged.
var etcdBackupKeys = []string{KeyAccessKeyID, KeySecretAccessKey, KeyBucketName, KeyEndpoint, KeyS3ForcePathStyle, KeyTrustedCACert,
	KeyInsecureSkipVerify, KeySSECustomerKey, KeySSECustomerAlgorithm, KeyRequestChecksumCalculation, KeyResponseChecksumValidation}

// storeKeys are the keys that say how to reach and use the store rather than who is calling it:
// a generated credential keeps them (credentialTemplate), and etcd-backup passes them on. The
// customer key is among them: without it shoots would write unencrypted snapshots, and could
// not read the encrypted ones.
var storeKeys = []string{KeyRegion, KeyEndpoint, KeyS3ForcePathStyle, KeyTrustedCACert, KeyInsecureSkipVerify,
	KeySSECustomerKey, KeySSECustomerAlgorithm, KeyRequestChecksumCalculation, KeyResponseChecksumValidation}

// EtcdBackupSecretData implements provider.Provider: the S3 keys etcd-backup-restore reads, and
// nothing else (any stray key, a *.json one above all, would confuse it).
func (p *Provider) EtcdBackupSecretData(be *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, k := range etcdBackupKeys {
		if v, ok := data[k]; ok {
			out[k] = v
		}
	}
	out[KeyRegion] = []byte(be.Spec.Region)
	if r, ok := data[KeyRegion]; ok && len(r) > 0 {
		out[KeyRegion] = r
	}
	if len(out[KeyRegion]) == 0 {
		return nil, objectstore.Invalidf("no region for the etcd-backup secret: set spec.region or the secret key %q", KeyRegion)
	}
	if err := validateRegion(string(out[KeyRegion]), len(data[KeyRegion]) > 0); err != nil {
		return nil, err
	}
	// What etcd-backup-restore v0.43.0 could not use is refused here, not found out by the
	// sidecar: it parses the booleans with strconv.ParseBool, hands the endpoint to the SDK and
	// trusts only trustedCaCert's certificates when that key is present.
	if err := validateEndpoint(out); err != nil {
		return nil, err
	}
	for _, k := range []string{KeyS3ForcePathStyle, KeyInsecureSkipVerify} {
		if _, err := boolKey(out, k); err != nil {
			return nil, err
		}
	}
	if err := validateCABundle(out); err != nil {
		return nil, err
	}
	if _, err := parseCustomerKey(out); err != nil {
		return nil, err
	}
	if err := validateChecksumModes(out); err != nil {
		return nil, err
	}
	if cfg, ok := data[KeyConfig]; ok {
		wi, err := awsapi.DecodeWorkloadIdentityConfig(cfg)
		if err != nil {
			return nil, err
		}
		out[KeyRoleARN] = []byte(wi.RoleARN)
		return out, nil
	}
	if len(out[KeyAccessKeyID]) == 0 || len(out[KeySecretAccessKey]) == 0 {
		return nil, objectstore.Invalidf("the entry secret has neither %q and %q nor a workload identity config", KeyAccessKeyID, KeySecretAccessKey)
	}
	return out, nil
}

// customerKey is an SSE-C key as the S3 API takes it in every request on an object written with
// it: the algorithm, the key in base64 and the base64 MD5 of the (decoded) key.
type customerKey struct {
	algorithm, key, keyMD5 string
}

// headers are the three SSE-C request fields; all nil without a key (k is nil).
func (k *customerKey) headers() (algorithm, key, keyMD5 *string) {
	if k == nil {
		return nil, nil, nil
	}
	return &k.algorithm, &k.key, &k.keyMD5
}

// sseAlgorithm is the only SSE-C algorithm S3 (and MinIO, internal/crypto/sse-c.go:73) accepts.
const sseAlgorithm = "AES256"

// parseCustomerKey reads the secret's SSE-C keys; nil without them. etcd-backup-restore refuses
// to start with only one of the two (getSSECreds, s3_snapstore.go:830-847) and sends both
// verbatim as the request headers, so the key must already be what the header holds: the
// base64 of a 256-bit key. An algorithm other than AES256 would have every upload refused. The
// key's value is never shown.
func parseCustomerKey(d map[string][]byte) (*customerKey, error) {
	key, hasKey := d[KeySSECustomerKey]
	alg, hasAlg := d[KeySSECustomerAlgorithm]
	switch {
	case !hasKey && !hasAlg:
		return nil, nil
	case !hasKey || !hasAlg:
		return nil, objectstore.Invalidf("secret keys %q and %q: set both or neither (etcd-backup-restore refuses to start with one alone)", KeySSECustomerKey, KeySSECustomerAlgorithm)
	case string(alg) != sseAlgorithm:
		return nil, objectstore.Invalidf("secret key %q must be %q, the only algorithm S3 offers for customer-provided keys (without spaces or a newline)", KeySSECustomerAlgorithm, sseAlgorithm)
	}
	// Decoding skips newlines, which the header cannot carry: the key must be the encoding itself.
	raw, err := base64.StdEncoding.DecodeString(string(key))
	if err != nil || len(raw) != 32 || base64.StdEncoding.EncodeToString(raw) != string(key) {
		return nil, objectstore.Invalidf("secret key %q must be the base64 of a 256-bit key (44 characters, without spaces or a newline), as S3 takes it", KeySSECustomerKey)
	}
	sum := md5.Sum(raw) //nolint:gosec // S3 wants the MD5 of an SSE-C key, as an integrity check of the header
	return &customerKey{algorithm: string(alg), key: string(key), keyMD5: base64.StdEncoding.EncodeToString(sum[:])}, nil
}

// validateChecksumModes refuses a checksum mode etcd-backup-restore does not know: it reads each
// case-insensitively as when_supported or when_required and refuses to build its store
// otherwise (requestChecksumCalculation, responseChecksumValidation, s3_snapstore.go:251-271).
func validateChecksumModes(d map[string][]byte) error {
	for _, k := range []string{KeyRequestChecksumCalculation, KeyResponseChecksumValidation} {
		v, ok := d[k]
		if !ok {
			continue
		}
		if m := strings.ToLower(string(v)); m != "when_supported" && m != "when_required" {
			return objectstore.Invalidf("secret key %q must be when_supported or when_required (without spaces or a newline), as etcd-backup-restore reads it", k)
		}
	}
	return nil
}
