#!/bin/bash
# Two revisions of the dynamic table's index (src/embedding/dynamic_table.{h,cc} and
# dynamic_admission_counter.{h,cc}) side by side in one process: their find() and training
# find_or_insert() of the same batches on a full table, in alternating turns (bench/README.md,
# `dynamic_probe_ab.sh`). Needs only g++ and libfmt-dev (no torch, no CMake build).
#
#   bench/dynamic_probe_ab.sh REV_A REV_B [LIVE_IDS=8000000] [PAIRS=60] [THREADS=2]
# REV_A / REV_B: git revisions, or "worktree" for the files as they are. Other headers (base/)
# come from the work tree. Flags as the Release build: -O3 -DNDEBUG -fopenmp, C++17.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: bench/dynamic_probe_ab.sh REV_A REV_B [LIVE_IDS] [PAIRS] [THREADS]" >&2
  exit 2
fi
REV_A=$1 REV_B=$2 LIVE=${3:-8000000} PAIRS=${4:-60} THREADS=${5:-2}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FILES="embedding/dynamic_table.h embedding/dynamic_table.cc embedding/dynamic_admission_counter.h embedding/dynamic_admission_counter.cc"
FLAGS="-std=c++17 -O3 -DNDEBUG -fopenmp"
for side in A B; do
  rev=REV_$side
  rev=${!rev}
  if [ "$rev" != worktree ] && ! git rev-parse --verify --quiet "$rev^{commit}" > /dev/null; then
    echo "dynamic_probe_ab.sh: '$rev' is not a revision of this repository; give a commit, a branch or worktree" >&2
    exit 1
  fi
  mkdir -p "$WORK/$side/embedding"
  for f in $FILES; do
    if [ "$rev" = worktree ]; then
      cp "src/$f" "$WORK/$side/$f"
    elif ! git show "$rev:src/$f" > "$WORK/$side/$f" 2> /dev/null; then
      echo "dynamic_probe_ab.sh: revision '$rev' has no src/$f (it predates the dynamic table); give a later one, or worktree" >&2
      exit 1
    fi
  done
  # Each side in its own namespace: the headers of its revision first, base/ from the work tree.
  inc="-I$WORK/$side -Isrc -Dembedding=tzrec_probe_$side"
  g++ $FLAGS $inc -DTZREC_PROBE_SIDE=$side -c bench/dynamic_probe_variant.cc -o "$WORK/variant_$side.o"
  g++ $FLAGS $inc -c "$WORK/$side/embedding/dynamic_table.cc" -o "$WORK/table_$side.o"
  g++ $FLAGS $inc -c "$WORK/$side/embedding/dynamic_admission_counter.cc" -o "$WORK/counter_$side.o"
done
g++ $FLAGS -Isrc -c src/base/huge_pages.cc -o "$WORK/huge_pages.o"
g++ $FLAGS -Isrc bench/dynamic_probe_ab.cc "$WORK"/*.o -lfmt -o "$WORK/dynamic_probe_ab"
echo "A = $REV_A, B = $REV_B"
"$WORK/dynamic_probe_ab" "$LIVE" "$PAIRS" "$THREADS"
