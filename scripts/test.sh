#!/usr/bin/env bash
# Installs what is missing, builds Release into build/ (every target) and runs every test with
# CTest: the unit tests as a few processes per module (GoogleTest shards; per-test results in the
# output and as JUnit XML under build/test-results/), the end-to-end scripts of tests/e2e.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
trap 'echo "test.sh: $((SECONDS - START)) s elapsed"' EXIT
scripts/setup.sh
rm -rf build/test-results
cd build
JOBS=${JOBS:-2}
# CTest runs JOBS tests side by side: each gets its share of the cores for torch's intra-op
# threads. Oversubscribed OpenMP threads wait on each other's time slices at every parallel
# region (two 2-thread trainings on 2 cores ran ~7x slower than with one thread each).
if [[ -z "${OMP_NUM_THREADS:-}" ]]; then
  OMP_NUM_THREADS=$(( $(nproc) / JOBS ))
  export OMP_NUM_THREADS=$(( OMP_NUM_THREADS > 0 ? OMP_NUM_THREADS : 1 ))
fi
echo "test.sh: ctest -j$JOBS, OMP_NUM_THREADS=$OMP_NUM_THREADS per test"
status=0
ctest --output-on-failure -j"$JOBS" "$@" || status=$?
# Per-test totals from the shards' JUnit files.
if compgen -G "test-results/*.xml" > /dev/null; then
  python3 - <<'PY' || true
import glob, xml.etree.ElementTree as ET
tests = failures = skipped = 0
failed = []
for f in sorted(glob.glob("test-results/*.xml")):
    root = ET.parse(f).getroot()
    for case in root.iter("testcase"):
        tests += 1
        if case.find("failure") is not None:
            failures += 1
            failed.append(case.get("classname") + "." + case.get("name"))
        elif case.get("result") == "skipped" or case.find("skipped") is not None:
            skipped += 1
print(f"unit tests: {tests} run, {failures} failed, {skipped} skipped")
for name in failed:
    print(f"  FAILED {name}")
PY
fi
exit $status
