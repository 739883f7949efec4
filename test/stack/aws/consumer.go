// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// S3Consumer is how etcd-druid runs etcd-backup-restore for an aws entry: AWS_APPLICATION_CREDENTIALS
// at the mounted secret, nothing else (the secret's endpoint and region reach MinIO).
var S3Consumer = stack.Consumer{StorageProvider: "S3", CredentialsEnv: "AWS_APPLICATION_CREDENTIALS"}
