#!/usr/bin/env bash
# Short libFuzzer run of the Parquet reader (fuzz/parquet_reader_fuzz.cc) under ASan + UBSan,
# seeded with the *.parquet files of the Parquet test corpora (tests/data/parquet-testing and
# tests/data/parquet-writers). Fails when the fuzzer reports a
# crash, leak, timeout or out-of-memory input (the input is kept and its path printed), or when
# clang / the libFuzzer runtime is missing. The tzrec binary argument is not used.
#
# FUZZ_SECONDS (default 20) sets the length of the run.
set -uo pipefail
ROOT=$2
cd "$ROOT" || { echo "FAIL: cannot cd to $ROOT"; exit 1; }
CORPUS=$ROOT/tests/data/parquet-testing
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
SECONDS=0

CXX=${FUZZ_CXX:-clang++}
command -v "$CXX" > /dev/null \
  || fail "$CXX not found: the Parquet fuzz smoke test needs clang and the libFuzzer runtime; run scripts/setup.sh"
# The runtime libraries ship separately from the compiler (Debian: libclang-rt-<version>-dev).
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' > "$WORK/probe.cc"
"$CXX" -fsanitize=fuzzer,address,undefined "$WORK/probe.cc" -o "$WORK/probe" 2> "$WORK/probe.err" || {
  cat "$WORK/probe.err"
  fail "$CXX cannot link a libFuzzer + ASan + UBSan binary (is libclang-rt-*-dev installed?); run scripts/setup.sh"
}
[[ -d $CORPUS ]] || fail "seed corpus $CORPUS not found"

# Only the reader's sources (src/parquet without tests, plus the logging they use), compiled in
# parallel; the harness gets -fsanitize=fuzzer (libFuzzer's main), the library only coverage.
FLAGS=(-std=c++17 -O1 -gline-tables-only -fno-omit-frame-pointer -fno-sanitize-recover=undefined -Isrc)
SOURCES=$(ls src/parquet/*.cc | grep -v '_test\.cc$'; echo src/base/logging.cc)
mkdir -p "$WORK/obj"
export CXX WORK
printf '%s\n' $SOURCES | xargs -P 2 -I{} sh -c \
  's=$1; shift; o="$WORK/obj/$(echo "$s" | tr / _).o"; "$CXX" "$@" -c "$s" -o "$o" 2> "$o.err" || { cat "$o.err"; exit 255; }' \
  _ {} "${FLAGS[@]}" -fsanitize=fuzzer-no-link,address,undefined \
  || fail "compiling the Parquet sources with $CXX failed"
"$CXX" "${FLAGS[@]}" -fsanitize=fuzzer,address,undefined fuzz/parquet_reader_fuzz.cc "$WORK"/obj/*.o \
  -lfmt -lsnappy -lzstd -llz4 -lbrotlidec -lbrotlienc -lz -lpthread -o "$WORK/fuzz" 2> "$WORK/link.err" \
  || { cat "$WORK/link.err"; fail "building the fuzz target failed"; }
echo "built the fuzz target in ${SECONDS}s"

# libFuzzer reads seed directories recursively: copy just the top-level .parquet files (the
# corpus also holds README/LICENSE files and expected/*.json).
mkdir -p "$WORK/seeds" "$WORK/corpus" "$WORK/artifacts"
cp "$CORPUS"/*.parquet "$WORK/seeds/" || fail "no .parquet files in $CORPUS"
cp "$ROOT"/tests/data/parquet-writers/*.parquet "$WORK/seeds/" || fail "no .parquet files in tests/data/parquet-writers"
START=$SECONDS
"$WORK/fuzz" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$WORK/artifacts/" "$WORK/corpus" "$WORK/seeds" > "$WORK/log" 2>&1
rc=$?
if [[ $rc -ne 0 ]] || compgen -G "$WORK/artifacts/*" > /dev/null \
  || grep -q "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:\|ERROR: libFuzzer" "$WORK/log"; then
  tail -n 60 "$WORK/log"
  KEEP=$(mktemp -d "${TMPDIR:-/tmp}/parquet_fuzz_artifacts.XXXXXX")
  cp "$WORK"/artifacts/* "$KEEP/" 2> /dev/null
  cp "$WORK/log" "$KEEP/fuzz.log"
  fail "the Parquet reader fuzzer failed (exit $rc); the reproducing input and the log are in $KEEP" \
    "(build the target as in fuzz/parquet_reader_fuzz.cc and run it with the input file as argument)"
fi
grep -q "^Done [0-9]* runs" "$WORK/log" || { tail -n 20 "$WORK/log"; fail "the fuzzer did not finish its run"; }
echo "fuzzed for $((SECONDS - START))s: $(grep '^Done' "$WORK/log"), $(ls "$WORK/corpus" | wc -l) new inputs"
echo "OK (${SECONDS}s in all)"
