package aws

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"

// Type is the extension type (spec.type) the AWS provider serves.
const Type = "aws"

// API is the SDK-free half of the AWS provider: what the admission webhook checks and the core
// decodes before any S3 call (S3's naming rules: names.go).
var API = config.NewAPI(Type, DecodeBackupBucketConfig, ValidateBucketName)
