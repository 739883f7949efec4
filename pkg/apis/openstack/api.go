package openstack

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"

// Type is the extension type the OpenStack provider serves.
const Type = "openstack"

// API is the provider's SDK-free half: what the admission webhook and the core check and decode
// without any cloud call (Swift's container naming rules: names.go).
var API = config.NewAPI(Type, DecodeBackupBucketConfig, ValidateBucketName)
