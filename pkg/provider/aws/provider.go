// Package aws is the AWS/S3 provider: AWS S3 and S3-compatible stores (MinIO, Ceph, ...) through
// aws-sdk-go-v2, behind the core's objectstore.Store.
package aws

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
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
	s := &store{client: client, regionOverride: string(creds.Data[KeyRegion]), pageSize: int32(p.ListPageSize)}
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
		return aws.Config{}, opts, fmt.Errorf("%w: no region: set spec.region or the secret key %q", objectstore.ErrInvalidConfig, KeyRegion)
	}
	opts.endpoint = string(d[KeyEndpoint])
	var err error
	if v, ok := d[KeyS3ForcePathStyle]; ok {
		if opts.pathStyle, err = strconv.ParseBool(string(v)); err != nil {
			return aws.Config{}, opts, fmt.Errorf("%w: secret key %q must be true or false", objectstore.ErrInvalidConfig, KeyS3ForcePathStyle)
		}
	}
	tlsConfig, err := tlsConfigFor(d)
	if err != nil {
		return aws.Config{}, opts, err
	}
	timeout := p.RequestTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	httpClient := awshttp.NewBuildableClient().
		WithTimeout(timeout).
		WithTransportOptions(func(t *http.Transport) {
			t.TLSClientConfig = tlsConfig
			t.MaxIdleConnsPerHost = 64
		})

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
		return aws.Config{}, opts, fmt.Errorf("%w: secret needs the keys %q and %q (or a workload identity)", objectstore.ErrInvalidConfig, KeyAccessKeyID, KeySecretAccessKey)
	}
	cfg.Credentials = credentials.NewStaticCredentialsProvider(id, secret, "")
	return cfg, opts, nil
}

// tlsConfigFor is the TLS configuration the secret asks for: TLS 1.2 at least, the secret's CA
// bundle trusted besides the system's, verification skipped only when the operator says so.
func tlsConfigFor(d map[string][]byte) (*tls.Config, error) {
	insecure := false
	if v, ok := d[KeyInsecureSkipVerify]; ok {
		var err error
		if insecure, err = strconv.ParseBool(string(v)); err != nil {
			return nil, fmt.Errorf("%w: secret key %q must be true or false", objectstore.ErrInvalidConfig, KeyInsecureSkipVerify)
		}
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure} //nolint:gosec // only when the operator asks for it
	if pem, ok := d[KeyTrustedCACert]; ok && len(pem) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: secret key %q holds no PEM certificate", objectstore.ErrInvalidConfig, KeyTrustedCACert)
		}
		tlsConfig.RootCAs = pool
	}
	return tlsConfig, nil
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
		return nil, fmt.Errorf("%w: no region for the etcd-backup secret: set spec.region or the secret key %q", objectstore.ErrInvalidConfig, KeyRegion)
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
		return nil, fmt.Errorf("%w: the entry secret has neither %q and %q nor a workload identity config", objectstore.ErrInvalidConfig, KeyAccessKeyID, KeySecretAccessKey)
	}
	return out, nil
}
