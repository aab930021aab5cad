#!/usr/bin/env bash
# The repository stands alone: no tracked file refers to a folder beside the checkout (the form
# "../<something outside>" used by development machines) and every test input is under tests/data.
# Usage: self_contained_test.sh [TZREC_BINARY] [REPO_ROOT]
set -euo pipefail
ROOT=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files)
else
  mapfile -t files < <(find . -path ./build -prune -o -path ./.git -prune -o -type f -print)
fi
# Built from pieces so that this script does not match itself.
outside='\.\./'"shared"'|/work/'"shared"
hits=$(printf '%s\0' "${files[@]}" | xargs -0 grep -I -n -E "$outside" -- 2>/dev/null || true)
if [[ -n $hits ]]; then
  echo "FAIL: tracked files refer to a folder outside the repository:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "OK: ${#files[@]} tracked files, none refers outside the repository"
