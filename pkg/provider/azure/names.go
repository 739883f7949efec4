package azure

import (
	"fmt"
	"strings"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// bucketNameSubject says where a container name comes from, for the messages.
const bucketNameSubject = "the BackupBucket's name, which its BackupEntries carry as spec.bucketName"

// validateContainerName checks Azure's naming rules for blob containers before any request, so
// that a name Azure would refuse (InvalidResourceName, or a 400 without a code on HEAD) is
// reported with the rule it breaks. The bucket's name is also its resource group's name (1-90
// letters, digits, '-', '_', '.', '(' and ')'), which every valid container name is; its storage
// account's name is derived ("bkp" and 21 hex digits, see AccountName) and always valid.
func validateContainerName(name string) error {
	if rule := containerNameRule(name); rule != "" {
		return objectstore.Invalidf("container name %q (%s) breaks Azure's container naming rules: %s", name, bucketNameSubject, rule)
	}
	return nil
}

func containerNameRule(name string) string {
	if len(name) < 3 || len(name) > 63 {
		return fmt.Sprintf("it must be 3 to 63 characters long, not %d", len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Sprintf("only lowercase letters, digits and dashes are allowed, not %q", r)
		}
	}
	switch {
	case name[0] == '-':
		return "it must begin with a lowercase letter or a digit"
	case name[len(name)-1] == '-':
		return "it must not end with a dash"
	case strings.Contains(name, "--"):
		return "it must not contain two consecutive dashes"
	}
	return ""
}

// accountKeyOnly refuses the providerConfig settings that live in the storage account's
// management plane, which a secret with only an account key cannot reach: declared, they would
// silently not be applied.
func accountKeyOnly(config any) error {
	cfg, _ := config.(*azureapi.BackupBucketConfig)
	if cfg == nil {
		return nil
	}
	var set []string
	if cfg.Immutability != nil {
		set = append(set, "spec.providerConfig.immutability (a container immutability policy)")
	}
	if cfg.SoftDelete != nil {
		set = append(set, "spec.providerConfig.softDelete (the account's soft delete)")
	}
	if cfg.StorageAccount != nil && cfg.StorageAccount.SKUName != "" {
		set = append(set, "spec.providerConfig.storageAccount.skuName (the account's redundancy)")
	}
	if cfg.Rotation != nil {
		set = append(set, "spec.providerConfig.rotation (the generated secret's key rotation: no secret is generated)")
	}
	if len(set) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: set through the storage account's management plane, which a secret with only an account key (%q, %q) cannot reach; use a service principal or workload identity secret, or remove the setting",
		objectstore.ErrInvalidConfig, strings.Join(set, ", "), KeyStorageAccount, KeyStorageKey)
}
