#!/usr/bin/env bash
# Builds the incumbents' backup controllers that test/integration/incumbent switches from and back
# to: a provider extension's own BackupBucket and BackupEntry controllers (test/incumbent/<name>,
# a Go module of its own each, so that its dependency versions never enter the main go.mod), once,
# cached by the module's content:
#   $CACHE/incumbent-<name>-<version>/<hash>/incumbent-<name>
# Usage: hack/incumbent.sh aws|azure|gcp|openstack   prints the binary's path on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${GEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-extension-backup}

source hack/progress.sh
say() { printf '[incumbent %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

name=${1:-aws}
case "$name" in
aws) module=github.com/gardener/gardener-extension-provider-aws ;;
azure) module=github.com/gardener/gardener-extension-provider-azure ;;
gcp) module=github.com/gardener/gardener-extension-provider-gcp ;;
openstack) module=github.com/gardener/gardener-extension-provider-openstack ;;
*) say "unknown incumbent ${name}; known: aws azure gcp openstack"; exit 2 ;;
esac
dir=test/incumbent/$name
version=$(awk -v m="$module" '$1 == m {print $2}' "$dir/go.mod")
hash=$(cat "$dir/go.mod" "$dir/go.sum" "$dir"/*.go | sha256sum | cut -c1-12)
out="$CACHE/incumbent-$name-$version/$hash/incumbent-$name"
if [[ ! -x $out ]]; then
  say "building ${module#github.com/gardener/} $version's backup controllers ($dir); the first build downloads its modules and takes minutes on 2 cores"
  mkdir -p "$(dirname "$out")"
  run_with_progress "building $dir" go build -C "$dir" -o "$out.tmp" .
  mv "$out.tmp" "$out"
fi
echo "$out"
