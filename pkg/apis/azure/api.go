package azure

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"

// Type is the extension type the Azure provider serves.
const Type = "azure"

// API is the SDK-free half of the Azure provider: the admission webhook and the core use it
// without linking the Azure SDK (Azure's container naming rules: names.go).
var API = config.NewAPI(Type, DecodeBackupBucketConfig, ValidateBucketName)
