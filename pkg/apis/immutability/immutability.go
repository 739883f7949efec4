// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package immutability holds what the providers' immutability settings share: a retention type,
// "bucket", and a retention period within the store's bounds. Each provider keeps its own config
// type (its own settings beside these, such as a mode or a lock) and its own bounds.
package immutability

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RetentionTypeBucket is the only retention type: a retention on the whole bucket.
const RetentionTypeBucket = "bucket"

// Period is what a store accepts as retention period.
type Period struct {
	// Min and Max bound the period (Max 0: no bound beyond the Duration's).
	Min, Max time.Duration
	// Unit is what the period is a whole multiple of.
	Unit time.Duration
	// Rule is the message of a period out of bounds: what it must be.
	Rule string
}

// WholeDays is the period of S3 Object Lock's default retention and of Azure's time-based
// immutability policy: whole days, at least one (Azure's 146,000 days at most are beyond what a
// Duration holds).
var WholeDays = Period{Min: 24 * time.Hour, Unit: 24 * time.Hour, Rule: "must be a whole number of days (a multiple of 24h), at least 24h"}

// Validate checks the retention type and period of the immutability settings at path.
func Validate(path *field.Path, retentionType string, period time.Duration, allowed Period) field.ErrorList {
	var errs field.ErrorList
	if retentionType != RetentionTypeBucket {
		errs = append(errs, field.NotSupported(path.Child("retentionType"), retentionType, []string{RetentionTypeBucket}))
	}
	if period < allowed.Min || (allowed.Max != 0 && period > allowed.Max) || period%allowed.Unit != 0 {
		errs = append(errs, field.Invalid(path.Child("retentionPeriod"), period.String(), allowed.Rule))
	}
	return errs
}
