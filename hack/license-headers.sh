#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
#
# SPDX-License-Identifier: Apache-2.0
# The SPDX header every source file carries (as in every Gardener repository; REUSE.toml covers the
# rest). Usage:
#   hack/license-headers.sh check   lists the tracked .go and .sh files without it; exit 1 if any
#   hack/license-headers.sh add     adds it to them (after a shebang line, before anything else)
set -euo pipefail
cd "$(dirname "$0")/.."
COPYRIGHT="SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors"
LICENSE="SPDX-License-Identifier: Apache-2.0"

missing() {
  git ls-files --cached --others --exclude-standard -- '*.go' '*.sh' | while read -r f; do
    [[ -f $f ]] || continue
    head -n 5 "$f" | grep -q "$LICENSE" || echo "$f"
  done
}

case "${1:-check}" in
check)
  files=$(missing)
  if [[ -n $files ]]; then
    echo "files without the SPDX header (make format adds it):" >&2
    echo "$files" >&2
    exit 1
  fi
  ;;
add)
  missing | while read -r f; do
    tmp=$(mktemp)
    case "$f" in
    *.go) printf '// %s\n//\n// %s\n\n' "$COPYRIGHT" "$LICENSE" | cat - "$f" >"$tmp" ;;
    *.sh)
      if head -n 1 "$f" | grep -q '^#!'; then
        { head -n 1 "$f"; printf '# %s\n#\n# %s\n' "$COPYRIGHT" "$LICENSE"; tail -n +2 "$f"; } >"$tmp"
      else
        printf '# %s\n#\n# %s\n\n' "$COPYRIGHT" "$LICENSE" | cat - "$f" >"$tmp"
      fi
      ;;
    esac
    chmod --reference="$f" "$tmp" && mv "$tmp" "$f"
    echo "added: $f"
  done
  ;;
*) echo "usage: $0 check|add" >&2; exit 2 ;;
esac
