#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
#
# SPDX-License-Identifier: Apache-2.0
# Builds what the incumbent-facing tests run of the incumbents' own code, each a Go module of its
# own under test/incumbent/ (so that its dependency versions never enter the main go.mod), once,
# cached by the module's content:
#   aws, gcp, azure, openstack: a provider extension's own BackupBucket and BackupEntry controllers,
#     which test/integration/incumbent switches from and back to
#   admission: provider-aws's and provider-gcp's garden validators and provider-gcp's Etcd webhook
#     (test/incumbent/admission), for test/integration/incumbentadmission
#   -> $CACHE/incumbent-<name>-<version>/<hash>/incumbent-<name>
# azure (provider-azure v1.62.1) and openstack (provider-openstack v1.57.0) build only where a
# module proxy serves those versions: the Go module proxy reachable here refuses both (403), so
# `make test` does not build them and their cases skip, saying so.
# Usage: hack/incumbent.sh aws|gcp|azure|openstack|admission   prints the binary's path on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${GEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-extension-backup}
mkdir -p "$CACHE"

source hack/progress.sh
say() { printf '[incumbent %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

name=${1:-aws}
dir=test/incumbent/$name
case "$name" in
aws | azure | gcp | openstack)
  module=github.com/gardener/gardener-extension-provider-$name
  version=$(awk -v m="$module" '$1 == m {print $2}' "$dir/go.mod")
  what="${module#github.com/gardener/} $version's backup controllers"
  ;;
admission)
  version=$(awk '$1 ~ /^github.com\/gardener\/gardener-extension-provider-(aws|gcp)$/ {sub(/.*-provider-/, "", $1); printf "%s%s-%s", sep, $1, $2; sep="-"}' "$dir/go.mod")
  what="the incumbents' admission and webhooks ($version)"
  ;;
*) say "unknown incumbent ${name}; known: aws gcp azure openstack admission"; exit 2 ;;
esac
hash=$(cat "$dir/go.mod" "$dir/go.sum" "$dir"/*.go | sha256sum | cut -c1-12)
out="$CACHE/incumbent-$name-$version/$hash/incumbent-$name"
# One build at a time per module: a second caller waits for the first and finds it cached.
exec 9>"$CACHE/.lock-incumbent-$name"
flock 9
if [[ ! -x $out ]]; then
  say "building $what ($dir); the first build downloads its modules and takes minutes on 2 cores"
  mkdir -p "$(dirname "$out")"
  run_with_progress "building $dir" go build -C "$dir" -o "$out.tmp" .
  mv "$out.tmp" "$out"
fi
echo "$out"
