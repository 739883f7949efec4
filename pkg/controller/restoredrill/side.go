// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
)

// side is which of an entry's stores a drill proves and where its traces go: the entry's own
// bucket (primarySide) or the copy bucket its seed configuration declares (copySide). Both are
// drilled alike; each has its condition, its drill status and mark in providerStatus, its event
// reasons and its metrics' store label.
type side struct {
	// store is the metrics' store label (metrics.StorePrimary, metrics.StoreCopy).
	store     string
	condition gardencorev1beta1.ConditionType
	// Event reasons of the condition's changes: True, False, Unknown.
	restorable, notRestorable, unknown string
	// status and started point at the side's last drill and its mark in ps.
	status  func(ps *entryinfo.ProviderStatus) **drill.Status
	started func(ps *entryinfo.ProviderStatus) **metav1.Time
}

var (
	primarySide = side{store: metrics.StorePrimary, condition: ConditionBackupsRestorable,
		restorable: EventRestorable, notRestorable: EventNotRestorable, unknown: EventRestorabilityUnknown,
		status:  func(ps *entryinfo.ProviderStatus) **drill.Status { return &ps.Drill },
		started: func(ps *entryinfo.ProviderStatus) **metav1.Time { return &ps.DrillStarted },
	}
	copySide = side{store: metrics.StoreCopy, condition: ConditionCopyRestorable,
		restorable: EventCopyRestorable, notRestorable: EventCopyNotRestorable, unknown: EventCopyRestorabilityUnknown,
		status:  func(ps *entryinfo.ProviderStatus) **drill.Status { return &ps.CopyDrill },
		started: func(ps *entryinfo.ProviderStatus) **metav1.Time { return &ps.CopyDrillStarted },
	}
)

// where is the store one drill reads: the bucket and region it reports in its status, the read-only
// view of it, and the side whose metrics it counts in.
type where struct {
	side           side
	bucket, region string
	source         func(ctx context.Context) (drill.Source, error)
}

// primaryOf is the entry's own bucket, read with the entry's own credentials (d.SourceFor).
func (d Driller) primaryOf(be *extensionsv1alpha1.BackupEntry) where {
	return where{side: primarySide, bucket: be.Spec.BucketName, region: be.Spec.Region,
		source: func(ctx context.Context) (drill.Source, error) { return d.SourceFor(ctx, be) }}
}
