#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
#
# SPDX-License-Identifier: Apache-2.0
# Runs a long command so that a user knows it lives: a heartbeat line every 30 s on stderr, its
# output kept and shown only when it fails. Sourced by hack/tools.sh; run directly by the Makefile:
#   hack/progress.sh LABEL CMD...

say() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

# run_with_progress LABEL CMD...: runs CMD, printing a heartbeat every 30 s so a user knows it lives.
run_with_progress() {
  local label=$1; shift
  local start=$SECONDS log
  log=$(mktemp)
  "$@" >"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    if (( (SECONDS - start) % 30 < 5 )) && kill -0 "$pid" 2>/dev/null; then
      say "  ... $label still running ($((SECONDS - start)) s elapsed)"
    fi
  done
  if ! wait "$pid"; then
    say "FAILED: $label; last output:"; tail -40 "$log" >&2; rm -f "$log"; return 1
  fi
  rm -f "$log"
  say "  done: $label in $((SECONDS - start)) s"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  label=$1; shift
  say "$label"
  run_with_progress "$label" "$@"
fi
