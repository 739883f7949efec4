#!/usr/bin/env bash
# Builds the incumbent's backup controllers that test/integration/incumbent switches from and back
# to: gardener-extension-provider-aws's own BackupBucket and BackupEntry controllers
# (test/incumbent/aws, a Go module of its own, so that its dependency versions never enter the
# main go.mod), once, cached by the module's content:
#   $CACHE/incumbent-aws-<version>/<hash>/incumbent-aws
# and the provider extensions' code that keeps running after their backup controllers are switched
# off (test/incumbent/admission: provider-aws's and provider-gcp's garden validators, provider-gcp's
# Etcd webhook):
#   $CACHE/incumbent-admission-aws-<version>-gcp-<version>/<hash>/incumbent-admission
# Usage: hack/incumbent.sh aws|admission   prints the binary's path on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${GEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-extension-backup}

source hack/progress.sh
say() { printf '[incumbent %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

case "${1:-aws}" in
aws)
  dir=test/incumbent/aws
  version=$(awk '$1 == "github.com/gardener/gardener-extension-provider-aws" {print $2}' "$dir/go.mod")
  out_name=incumbent-aws what="gardener-extension-provider-aws $version's backup controllers"
  ;;
admission)
  # provider-aws's and provider-gcp's garden validators and provider-gcp's Etcd webhook
  # (test/incumbent/admission), for test/integration/incumbentadmission.
  dir=test/incumbent/admission
  version=$(awk '$1 ~ /^github.com\/gardener\/gardener-extension-provider-(aws|gcp)$/ {sub(/.*-provider-/, "", $1); printf "%s%s-%s", sep, $1, $2; sep="-"}' "$dir/go.mod")
  out_name=incumbent-admission what="the incumbents' admission and webhooks ($version)"
  ;;
*) say "unknown incumbent ${1}; known: aws, admission"; exit 2 ;;
esac
hash=$(cat "$dir/go.mod" "$dir/go.sum" "$dir"/*.go | sha256sum | cut -c1-12)
out="$CACHE/$out_name-$version/$hash/$out_name"
if [[ ! -x $out ]]; then
  say "building $what ($dir); the first build downloads its modules and takes minutes on 2 cores"
  mkdir -p "$(dirname "$out")"
  run_with_progress "building $dir" go build -C "$dir" -o "$out.tmp" .
  mv "$out.tmp" "$out"
fi
echo "$out"
