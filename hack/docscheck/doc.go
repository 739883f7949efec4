// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package docscheck holds the test that keeps the figures and versions README.md and docs/ state
// to what the code says, and their relative links to files and headings that exist.
package docscheck
