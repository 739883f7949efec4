// Package aws is the AWS/S3 provider: AWS S3 and S3-compatible stores (MinIO, Ceph, ...) through
// aws-sdk-go-v2, behind the core's objectstore.Store.
package aws

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/validation"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// Type is the extension type this provider serves.
const Type = "aws"

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
)

// Provider builds S3 stores. Its fields are fixed at start-up; nothing per request is kept.
type Provider struct {
	// STSEndpoint overrides the STS endpoint used for workload identity (tests point it at a
	// stand-in; empty: AWS's regional endpoint).
	STSEndpoint string
	// RequestTimeout bounds one HTTP request (default 60s).
	RequestTimeout time.Duration
	// IAMEndpoint overrides the IAM endpoint used for generated credentials (tests point it at a
	// stand-in; empty: AWS's global endpoint).
	IAMEndpoint string
	// ListPageSize overrides the listing page size (0: S3's maximum of 1000); tests force small
	// pages so that listings cross page boundaries between one key's versions.
	ListPageSize int
}

var _ provider.Provider = (*Provider)(nil)

// Type implements provider.Provider.
func (p *Provider) Type() string { return Type }

// DecodeBucketConfig implements provider.Provider.
func (p *Provider) DecodeBucketConfig(raw []byte) (any, error) {
	return awsapi.DecodeBackupBucketConfig(raw)
}

// NewStore implements provider.Provider.
func (p *Provider) NewStore(_ context.Context, creds provider.Credentials) (objectstore.Store, error) {
	client, err := p.NewS3Client(creds)
	if err != nil {
		return nil, err
	}
	s := &store{client: client, regionOverride: string(creds.Data[KeyRegion]), pageSize: int32(p.ListPageSize),
		credentialKeys: fmt.Sprintf("%q and %q", KeyAccessKeyID, KeySecretAccessKey)}
	if creds.WorkloadIdentity {
		s.credentialKeys = fmt.Sprintf("%q and %q (workload identity)", KeyConfig, KeyToken)
	}
	cfg, _ := creds.BucketConfig.(*awsapi.BackupBucketConfig)
	issuer := ""
	switch {
	case cfg != nil && cfg.GeneratedCredentials != nil:
		// Only the bucket controller passes a config: it publishes the generated credentials.
		issuer = cfg.GeneratedCredentials.Issuer
	case creds.Retiring && len(creds.Data[KeyEndpoint]) > 0:
		// Credentials generated earlier are revoked with the issuer they came from: MinIO for
		// an S3-compatible endpoint, IAM on AWS.
		issuer = awsapi.IssuerMinIO
	case creds.Retiring:
		issuer = awsapi.IssuerIAM
	default:
		return s, nil
	}
	if issuer == awsapi.IssuerMinIO {
		return newMinIOIssuer(s, creds.Data)
	}
	awsCfg, _, err := p.clientConfig(creds)
	if err != nil {
		return nil, err
	}
	return p.newIAMIssuer(s, creds.Data, awsCfg), nil
}

// NewS3Client builds the S3 client a store uses (the benchmarks build their baselines with it,
// so that strategies differ in nothing but strategy).
func (p *Provider) NewS3Client(creds provider.Credentials) (*s3.Client, error) {
	cfg, opts, err := p.clientConfig(creds)
	if err != nil {
		return nil, err
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if opts.endpoint != "" {
			o.BaseEndpoint = aws.String(opts.endpoint)
		}
		o.UsePathStyle = opts.pathStyle
	}), nil
}

type clientOptions struct {
	endpoint  string
	pathStyle bool
}

// clientConfig builds the SDK configuration from the secret alone: no environment variables,
// shared config files or instance metadata are consulted, so the operator's secret is the only
// source of truth (and the machine's AWS_CA_BUNDLE cannot break the client).
func (p *Provider) clientConfig(creds provider.Credentials) (aws.Config, clientOptions, error) {
	var opts clientOptions
	d := creds.Data
	region := string(d[KeyRegion])
	if region == "" {
		region = creds.Region
	}
	if region == "" {
		return aws.Config{}, opts, objectstore.Invalidf("no region: set spec.region or the secret key %q", KeyRegion)
	}
	if err := validateRegion(region, len(d[KeyRegion]) > 0); err != nil {
		return aws.Config{}, opts, err
	}
	if err := validateEndpoint(d); err != nil {
		return aws.Config{}, opts, err
	}
	opts.endpoint = string(d[KeyEndpoint])
	var err error
	if opts.pathStyle, err = boolKey(d, KeyS3ForcePathStyle); err != nil {
		return aws.Config{}, opts, err
	}
	tlsConfig, err := tlsConfigFor(d)
	if err != nil {
		return aws.Config{}, opts, err
	}
	timeout := httpclient.Timeout(p.RequestTimeout)
	// The SDK's transport defaults, with the secret's TLS; every request of the clients built on
	// this configuration (S3, STS, IAM) is counted by the metrics transport.
	sdkTransport := awshttp.NewBuildableClient().
		WithTransportOptions(func(t *http.Transport) {
			t.TLSClientConfig = tlsConfig
			t.MaxIdleConnsPerHost = 64
		}).GetTransport()
	httpClient := &http.Client{Transport: metrics.Transport(Type, sdkTransport), Timeout: timeout}

	cfg := aws.Config{
		Region:     region,
		HTTPClient: httpClient,
		Retryer: func() aws.Retryer {
			// The SDK retries transient failures a few times; longer throttling reaches the
			// deletion engine, which slows down, and the controllers, which requeue.
			return retry.NewStandard(func(o *retry.StandardOptions) { o.RateLimiter = ratelimit.None })
		},
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}

	if creds.WorkloadIdentity {
		wi, err := awsapi.DecodeWorkloadIdentityConfig(d[KeyConfig])
		if err != nil {
			return aws.Config{}, opts, err
		}
		token := d[KeyToken]
		if len(token) == 0 {
			return aws.Config{}, opts, fmt.Errorf("%w: workload identity secret has no %q yet", objectstore.ErrUnauthenticated, KeyToken)
		}
		stsClient := sts.NewFromConfig(cfg, func(o *sts.Options) {
			o.Credentials = aws.AnonymousCredentials{}
			if p.STSEndpoint != "" {
				o.BaseEndpoint = aws.String(p.STSEndpoint)
			}
		})
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewWebIdentityRoleProvider(stsClient, wi.RoleARN, staticToken(token)))
		return cfg, opts, nil
	}

	id, secret := string(d[KeyAccessKeyID]), string(d[KeySecretAccessKey])
	if id == "" || secret == "" {
		return aws.Config{}, opts, objectstore.Invalidf("secret needs the keys %q and %q (or a workload identity)", KeyAccessKeyID, KeySecretAccessKey)
	}
	cfg.Credentials = credentials.NewStaticCredentialsProvider(id, secret, "")
	return cfg, opts, nil
}

// tlsConfigFor is the TLS configuration the secret asks for: TLS 1.2 at least, the secret's CA
// bundle trusted besides the system's, verification skipped only when the operator says so.
func tlsConfigFor(d map[string][]byte) (*tls.Config, error) {
	insecure, err := boolKey(d, KeyInsecureSkipVerify)
	if err != nil {
		return nil, err
	}
	if err := validateCABundle(d); err != nil {
		return nil, err
	}
	return httpclient.TLSConfig(d[KeyTrustedCACert], KeyTrustedCACert, insecure)
}

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

type staticToken []byte

func (t staticToken) GetIdentityToken() ([]byte, error) { return t, nil }

// etcdBackupKeys are the keys of the entry secret that etcd-backup-restore reads and that are
// passed through unchanged.
var etcdBackupKeys = []string{KeyAccessKeyID, KeySecretAccessKey, KeyEndpoint, KeyS3ForcePathStyle, KeyTrustedCACert, KeyInsecureSkipVerify, KeyBucketName}

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
