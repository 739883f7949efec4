// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
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
	// Checked here too, so that a bucket whose secret would break the sidecar (or this
	// extension's own reads) is refused before any shoot gets it.
	if _, err := parseCustomerKey(d); err != nil {
		return aws.Config{}, opts, err
	}
	if err := validateChecksumModes(d); err != nil {
		return aws.Config{}, opts, err
	}
	transportOptions, err := transportOptionsFor(d)
	if err != nil {
		return aws.Config{}, opts, err
	}
	// Every request of the clients built on this configuration (S3, STS, IAM) is counted by the
	// metrics transport; the transport is shared with every other store of the same options.
	// No timeout on the whole exchange: the body of a large snapshot's GET (a streamed copy, a
	// drill) flows for longer than any fixed bound. Each wait on the store is bounded instead
	// (StallTimeout), and the caller's context bounds the exchange.
	transportOptions.StallTimeout = httpclient.Timeout(p.RequestTimeout)
	transport, err := httpclient.RoundTripper(transportOptions)
	if err != nil {
		return aws.Config{}, opts, err
	}
	httpClient := &http.Client{Transport: transport}

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

// transportOptionsFor is the transport the secret asks for: TLS 1.2 at least, the secret's CA
// bundle trusted besides the system's, verification skipped only when the operator says so.
func transportOptionsFor(d map[string][]byte) (httpclient.Options, error) {
	insecure, err := boolKey(d, KeyInsecureSkipVerify)
	if err != nil {
		return httpclient.Options{}, err
	}
	if err := validateCABundle(d); err != nil {
		return httpclient.Options{}, err
	}
	return httpclient.Options{Provider: Type, CA: string(d[KeyTrustedCACert]), CAKey: KeyTrustedCACert, InsecureSkipVerify: insecure, MaxIdleConnsPerHost: 64}, nil
}

type staticToken []byte

func (t staticToken) GetIdentityToken() ([]byte, error) { return t, nil }
