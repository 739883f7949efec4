// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package charts embeds the extension's Helm chart, so that tests render exactly what operators
// deploy and example/ is generated from it.
package charts

import "embed"

// ChartPath is the chart's directory within FS.
const ChartPath = "gardener-extension-backup"

// FS holds the chart.
//
//go:embed all:gardener-extension-backup
var FS embed.FS
