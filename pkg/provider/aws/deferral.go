package aws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// DeferDeletion implements objectstore.Store with a lifecycle rule that expires every version
// under prefix one day after it may be deleted: S3 removes what Object Lock holds once the lock
// ends, and nobody has to poll.
func (s *store) DeferDeletion(ctx context.Context, bucket, prefix string) (objectstore.Deferral, error) {
	if err := awsapi.ValidateBucketName(bucket); err != nil {
		return objectstore.Deferral{}, err
	}
	id := ruleDeferredPrefix + prefix
	if len(id) > 255 || prefix == "" {
		sum := sha256.Sum256([]byte(prefix))
		id = ruleDeferredPrefix + hex.EncodeToString(sum[:12])
	}
	rule := types.LifecycleRule{
		ID:                          aws.String(id),
		Status:                      types.ExpirationStatusEnabled,
		Filter:                      &types.LifecycleRuleFilter{Prefix: aws.String(prefix)},
		Expiration:                  &types.LifecycleExpiration{Days: aws.Int32(1)},
		NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(1)},
	}
	// updateLifecycle reads the rules back after writing them: the rule is in place when it returns.
	err := s.updateLifecycle(ctx, bucket, func(rules []types.LifecycleRule) ([]types.LifecycleRule, error) {
		rules = slices.DeleteFunc(rules, func(r types.LifecycleRule) bool { return aws.ToString(r.ID) == id })
		return append(rules, rule), nil
	})
	if err != nil {
		return objectstore.Deferral{}, err
	}
	return objectstore.Deferral{Rule: "lifecycle rule " + id}, nil
}
