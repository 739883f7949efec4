#!/usr/bin/env bash
# Builds the incumbent's backup controllers that test/integration/incumbent switches from and back
# to: gardener-extension-provider-aws's own BackupBucket and BackupEntry controllers
# (test/incumbent/aws, a Go module of its own, so that its dependency versions never enter the
# main go.mod), once, cached by the module's content:
#   $CACHE/incumbent-aws-<version>/<hash>/incumbent-aws
# Usage: hack/incumbent.sh aws   prints the binary's path on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${GEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-extension-backup}

source hack/progress.sh
say() { printf '[incumbent %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

case "${1:-aws}" in
aws) dir=test/incumbent/aws ;;
*) say "unknown incumbent ${1}; known: aws"; exit 2 ;;
esac
version=$(awk '$1 == "github.com/gardener/gardener-extension-provider-aws" {print $2}' "$dir/go.mod")
hash=$(cat "$dir/go.mod" "$dir/go.sum" "$dir"/*.go | sha256sum | cut -c1-12)
out="$CACHE/incumbent-aws-$version/$hash/incumbent-aws"
if [[ ! -x $out ]]; then
  say "building gardener-extension-provider-aws $version's backup controllers ($dir); the first build downloads its modules and takes minutes on 2 cores"
  mkdir -p "$(dirname "$out")"
  run_with_progress "building $dir" go build -C "$dir" -o "$out.tmp" .
  mv "$out.tmp" "$out"
fi
echo "$out"
