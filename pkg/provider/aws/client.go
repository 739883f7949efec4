package aws

import (
	"crypto/tls"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

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

type staticToken []byte

func (t staticToken) GetIdentityToken() ([]byte, error) { return t, nil }
