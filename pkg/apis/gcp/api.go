package gcp

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"

// Type is the extension type (spec.type) of the GCS provider.
const Type = "gcp"

// API is the SDK-free half of the GCS provider: what the admission webhook checks without
// linking the cloud SDK (GCS's bucket naming rules: names.go).
var API = config.NewAPI(Type, DecodeBackupBucketConfig, ValidateBucketName)
