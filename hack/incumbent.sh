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
  start=$SECONDS
  log=$(mktemp)
  go build -C "$dir" -o "$out.tmp" . >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    if (( (SECONDS - start) % 30 < 5 )) && kill -0 "$pid" 2>/dev/null; then
      say "  ... still building ($((SECONDS - start)) s elapsed)"
    fi
  done
  if ! wait "$pid"; then
    say "FAILED: building $dir; last output:"; tail -40 "$log" >&2; rm -f "$log"; exit 1
  fi
  rm -f "$log"
  mv "$out.tmp" "$out"
  say "built in $((SECONDS - start)) s"
fi
echo "$out"
