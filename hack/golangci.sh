#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
#
# SPDX-License-Identifier: Apache-2.0
# Installs golangci-lint (the linter every Gardener repository runs) from the Go module proxy,
# cached outside the checkout and keyed by version, and prints its path on the last line:
#   $CACHE/golangci-lint-<version>/golangci-lint
# Usage: hack/golangci.sh            (about 3-5 min on 2 cores the first time, instant after)
set -euo pipefail
cd "$(dirname "$0")/.."
GOLANGCI_LINT_VERSION=${GOLANGCI_LINT_VERSION:-v2.15.0}
CACHE=${GEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-extension-backup}
source hack/progress.sh
say() { printf '[golangci %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

dir="$CACHE/golangci-lint-$GOLANGCI_LINT_VERSION"
if [[ ! -x $dir/golangci-lint ]]; then
  say "building golangci-lint $GOLANGCI_LINT_VERSION from the module proxy (about 3-5 min the first time)"
  mkdir -p "$dir.tmp"
  run_with_progress "golangci-lint build" env GOBIN="$dir.tmp" GOFLAGS=-mod=mod \
    go install -ldflags '-s -w' "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION"
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
fi
echo "$dir/golangci-lint"
