#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
#
# SPDX-License-Identifier: Apache-2.0
# Installs the real components the tests and the demo run against, built from the Go module proxy
# (nothing else is reachable here), cached outside the checkout and keyed by version so that a
# second run costs seconds:
#   kube-apiserver + etcd  (envtest's control plane)  -> $CACHE/envtest-<k8s>-<etcd>/
#   minio                  (S3 stand-in)              -> $CACHE/minio-<version>/minio
#   fake-gcs-server        (GCS stand-in)             -> $CACHE/fake-gcs-server-<version>/fake-gcs-server
#   azurite                (Azure Blob stand-in, npm) -> $CACHE/azurite-<version>/node_modules/.bin/azurite-blob
#   etcdbrctl              (etcd-backup-restore, the consumer of etcd-backup) -> $CACHE/etcd-backup-restore-<version>/etcdbrctl
#                          (etcdbr: the pinned version; etcdbr-previous: the one before, which the consumer test runs too)
#   Keystone + Swift       (OpenStack stand-in, Debian's packages: hack/openstack.sh install)
# Usage: hack/tools.sh [envtest|minio|fakegcs|azurite|etcdbr|etcdbr-previous|openstack|all|demo <type>|demo-components <type>]   prints the folder/binary on the last line of each step.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.36.4}
ETCD_VERSION=${ETCD_VERSION:-v3.6.8}
MINIO_VERSION=${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}
FAKE_GCS_VERSION=${FAKE_GCS_VERSION:-v1.56.1}
AZURITE_VERSION=${AZURITE_VERSION:-3.37.0}
# The etcd-backup-restore the consumer-contract tests (test/integration/consumer) and the demo
# run: the newest the module proxy serves; raising it is this one line. The consumer tests run the
# previous one too (ETCDBR_PREVIOUS), for landscapes that have not moved yet.
ETCDBR_VERSION=${ETCDBR_VERSION:-v0.44.1}
ETCDBR_PREVIOUS_VERSION=${ETCDBR_PREVIOUS_VERSION:-v0.43.0}
CACHE=${GEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-extension-backup}
mkdir -p "$CACHE"

# run_with_progress LABEL CMD... (hack/progress.sh): a heartbeat every 30 s while CMD runs.
source "$(dirname "${BASH_SOURCE[0]}")/progress.sh"

say() { printf '[tools %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

envtest() {
  local dir="$CACHE/envtest-${K8S_VERSION}-etcd-${ETCD_VERSION}"
  if [[ -x $dir/kube-apiserver && -x $dir/etcd ]]; then echo "$dir"; return; fi
  mkdir -p "$dir"
  local work; work=$(mktemp -d)
  if [[ ! -x $dir/etcd ]]; then
    say "building etcd $ETCD_VERSION from the module proxy (step 1/2, about 1 min the first time)"
    mkdir -p "$work/etcd"
    cat >"$work/etcd/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
    (cd "$work/etcd" && go mod init local/etcd >/dev/null 2>&1 && go mod edit -require "go.etcd.io/etcd/server/v3@$ETCD_VERSION")
    run_with_progress "etcd build" bash -c "cd '$work/etcd' && go mod tidy && CGO_ENABLED=0 go build -ldflags '-s -w' -o '$dir/etcd.tmp' . && mv '$dir/etcd.tmp' '$dir/etcd'"
  fi
  if [[ ! -x $dir/kube-apiserver ]]; then
    say "building kube-apiserver $K8S_VERSION from the module proxy (step 2/2, about 6-10 min and 150 MB the first time)"
    mkdir -p "$work/kas"
    local kmod minor
    minor=$(echo "$K8S_VERSION" | cut -d. -f2)
    kmod=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    (
      cd "$work/kas"
      go mod init local/kas >/dev/null 2>&1
      go mod edit -require "k8s.io/kubernetes@$K8S_VERSION"
      grep '=> ./staging' "$kmod" | awk '{print $1}' | while read -r m; do
        go mod edit -replace "$m=$m@v0.${minor}.${K8S_VERSION##*.}"
      done
      cat > tools.go <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
    )
    local ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
    run_with_progress "kube-apiserver module download" bash -c "cd '$work/kas' && go mod tidy -e >/dev/null 2>&1; go mod download k8s.io/kubernetes && go get k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION"
    run_with_progress "kube-apiserver build" bash -c "cd '$work/kas' && CGO_ENABLED=0 go build -ldflags '$ld' -o '$dir/kube-apiserver.tmp' k8s.io/kubernetes/cmd/kube-apiserver && mv '$dir/kube-apiserver.tmp' '$dir/kube-apiserver'"
  fi
  rm -rf "$work"
  echo "$dir"
}

minio() {
  local dir="$CACHE/minio-${MINIO_VERSION}"
  if [[ -x $dir/minio ]]; then echo "$dir/minio"; return; fi
  mkdir -p "$dir"
  say "building MinIO $MINIO_VERSION from the module proxy (about 6-10 min and 1.5 GB of memory the first time)"
  run_with_progress "minio build" env GOBIN="$dir/bin.tmp" CGO_ENABLED=0 go install -ldflags '-s -w' "github.com/minio/minio@$MINIO_VERSION"
  mv "$dir/bin.tmp/minio" "$dir/minio" && rm -rf "$dir/bin.tmp"
  echo "$dir/minio"
}

fakegcs() {
  local dir="$CACHE/fake-gcs-server-${FAKE_GCS_VERSION}"
  if [[ -x $dir/fake-gcs-server ]]; then echo "$dir/fake-gcs-server"; return; fi
  mkdir -p "$dir"
  say "building fake-gcs-server $FAKE_GCS_VERSION from the module proxy (about 1 min the first time)"
  run_with_progress "fake-gcs-server build" env GOBIN="$dir/bin.tmp" CGO_ENABLED=0 go install -ldflags '-s -w' "github.com/fsouza/fake-gcs-server@$FAKE_GCS_VERSION"
  mv "$dir/bin.tmp/fake-gcs-server" "$dir/fake-gcs-server" && rm -rf "$dir/bin.tmp"
  echo "$dir/fake-gcs-server"
}

azurite() {
  local dir="$CACHE/azurite-${AZURITE_VERSION}"
  if [[ -x $dir/node_modules/.bin/azurite-blob ]]; then echo "$dir/node_modules/.bin/azurite-blob"; return; fi
  if ! command -v npm >/dev/null; then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
      say "installing Debian's nodejs and npm for Azurite (once, about 1 min)"
      run_with_progress "apt-get install nodejs npm" bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm"
    else
      say "npm is needed for Azurite: install Debian's nodejs and npm packages"; return 1
    fi
  fi
  mkdir -p "$dir"
  say "installing Azurite $AZURITE_VERSION from the npm registry (about 1 min the first time)"
  run_with_progress "azurite install" npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION"
  echo "$dir/node_modules/.bin/azurite-blob"
}

# etcdbr builds etcd-backup-restore's etcdbrctl from the module proxy. The build runs in a copy of
# the module's own source, so that its go.mod (with its replace of otelgrpc v0.63.0 by v0.46.0,
# without which it does not resolve) and its go.sum pin every dependency exactly as upstream does:
# its newest dependencies are not in the checksum database yet, the go.sum it ships holds their
# hashes. The module itself is not in the checksum database either (404), so only its own
# download skips that lookup (GONOSUMDB for that one module path).
etcdbr_version() {
  local version=$1 dir="$CACHE/etcd-backup-restore-$1"
  if [[ -x $dir/etcdbrctl ]]; then echo "$dir/etcdbrctl"; return; fi
  mkdir -p "$dir"
  say "building etcd-backup-restore $version from the module proxy (about 2-4 min the first time)"
  local work mod src
  work=$(mktemp -d)
  mod=github.com/gardener/etcd-backup-restore
  src=$(cd "$work" && GONOSUMDB=$mod GOFLAGS=-mod=mod go mod download -json "$mod@$version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  if [[ -z $src ]]; then say "FAILED: downloading $mod@$version"; rm -rf "$work"; return 1; fi
  cp -r "$src" "$work/src" && chmod -R u+w "$work/src"
  run_with_progress "etcd-backup-restore $version build" bash -c "cd '$work/src' && CGO_ENABLED=0 go build -ldflags '-s -w -X $mod/pkg/version.Version=$version' -o '$dir/etcdbrctl.tmp' . && mv '$dir/etcdbrctl.tmp' '$dir/etcdbrctl'"
  rm -rf "$work"
  echo "$dir/etcdbrctl"
}
etcdbr() { etcdbr_version "$ETCDBR_VERSION"; }
etcdbr_previous() { etcdbr_version "$ETCDBR_PREVIOUS_VERSION"; }

# openstack installs Debian's Keystone and Swift packages, if missing.
openstack() { "$(dirname "${BASH_SOURCE[0]}")/openstack.sh" install; }

# The components, each a function above: a stand-in's tools (test/standin) name them.
COMPONENTS="envtest minio fakegcs azurite etcdbr etcdbr_previous openstack"

# locked COMPONENT: builds one component under its own lock, so that a second caller (two test
# packages starting envtest, two make runs) waits for the first build and then finds it cached,
# instead of building the same tool beside it.
locked() {
  ( flock 9; "$1" ) 9>"$CACHE/.lock-$1"
}

# together COMPONENT...: builds the components at once (their builds and module downloads overlap,
# which on 2 cores takes minutes off a first run; each prints its own progress lines) and fails if
# any failed. Each is a different tool, so no two builds of one tool collide.
together() {
  local pids=() c rc=0
  for c in "$@"; do
    if [[ " $COMPONENTS " != *" $c "* ]]; then echo "unknown component '$c' (one of: $COMPONENTS)" >&2; return 2; fi
  done
  for c in "$@"; do locked "$c" & pids+=($!); done
  for c in "${pids[@]}"; do wait "$c" || rc=1; done
  return $rc
}

# demo_components TYPE: the components that provider's stand-in names (the `Tools: []string{...}`
# of test/standin/<type>/standin.go), read from its source so that they build while the demo compiles;
# pkg/provider/all's pieces test checks that this reading equals the registration.
demo_components() {
  local file
  file="$(dirname "${BASH_SOURCE[0]}")/../test/standin/$1/standin.go"
  if [[ ! -f $file ]]; then echo "provider '$1' has no stand-in (test/standin/$1/standin.go)" >&2; return 2; fi
  sed -n 's/.*Tools: *\[\]string{\([^}]*\)}.*/\1/p' "$file" | tr -d '",'
}

case ${1:-all} in
  envtest) locked envtest ;;
  minio) locked minio ;;
  fakegcs) locked fakegcs ;;
  azurite) locked azurite ;;
  etcdbr) locked etcdbr ;;
  etcdbr-previous) locked etcdbr_previous ;;
  all) together envtest minio fakegcs azurite etcdbr etcdbr_previous ;;
  openstack) locked openstack ;;
  demo-components) demo_components "${2:-aws}" ;;
  demo) # what `make demo PROVIDER=<type>` runs: the seed, etcd-backup-restore, and the components
    # the provider's stand-in names, all at once
    comps=$(demo_components "${2:-aws}")
    # shellcheck disable=SC2086 # one word per component
    together envtest etcdbr $comps ;;
  *) echo "usage: $0 [envtest|minio|fakegcs|azurite|etcdbr|etcdbr-previous|openstack|all|demo <type>|demo-components <type>]" >&2; exit 2 ;;
esac
