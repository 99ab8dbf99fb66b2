#!/usr/bin/env bash
# Fuzzes Tunebench's input parsers with libFuzzer (Debian's clang): the event reader (with the
# analysis behind it), config::from_json, session open + load, the torch.profiler trace reader, the session an HTML report carries and an allocator
# snapshot. Each target runs for a set time
# on a scratch corpus seeded from the tree (tests/data, sessions/, tests/fuzz/seeds) and its saved
# findings (tests/fuzz/findings/<target>/).
#
#   scripts/fuzz.sh smoke          every target 10 s (what `scripts/tunebench.sh test` runs)
#   scripts/fuzz.sh run [SECONDS]  every target SECONDS (default 300)
#   scripts/fuzz.sh run 600 session   one target
#   scripts/fuzz.sh build          only build the targets (`tunebench.sh test` builds them while
#                                  the suite runs)
#
# Builds in build-fuzz/ (clang, ASan + UBSan + libFuzzer coverage; the worker and GUI are not built).
# A crash, sanitizer report, leak or broken oracle fails the run; the input is saved under
# build-fuzz/tests/fuzz/work/<target>/artifacts/. Targets: one per tests/fuzz/<name>_fuzzer.cpp. Fix it, then copy the input into
# tests/fuzz/findings/<target>/ so every build replays it. Record long runs in docs/RELIABILITY.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${TUNEBENCH_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
mode="${1:-smoke}"
seconds="${2:-300}"
only="${3:-}"
[ "$mode" = smoke ] || [ "$mode" = build ] && seconds=10
case "$mode" in smoke | run | build) ;; *) echo "usage: $0 {smoke|run [SECONDS] [TARGET]|build}" >&2; exit 2 ;; esac
command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }

export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1  # as tunebench.sh
if [ ! -f "$BUILD/build.ninja" ]; then
  # TUNEBENCH_BUILD_FUZZERS instruments every library (ASan, UBSan, libFuzzer coverage). -O1 with
  # line tables, as libFuzzer's documentation builds: reports keep file:line, the build is faster.
  # A unity build, as tunebench.sh's.
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS="-fno-omit-frame-pointer" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_UNITY_BUILD=ON \
    -DTUNEBENCH_BUILD_WORKER=OFF -DTUNEBENCH_BUILD_GUI=OFF -DTUNEBENCH_BUILD_TESTS=ON -DTUNEBENCH_BUILD_FUZZERS=ON \
    -DTUNEBENCH_FUZZ_SMOKE_S="$seconds" >/dev/null
fi
cmake -S "$ROOT" -B "$BUILD" -DTUNEBENCH_FUZZ_SMOKE_S="$seconds" >/dev/null
cmake --build "$BUILD" --target tunebench_fuzzers -- -j"$(nproc)"  # every target tests/fuzz adds
[ "$mode" = build ] && exit 0
cd "$BUILD"
status=0
# One libFuzzer process per core (each is single-threaded).
ctest -L fuzz ${only:+-R "fuzz\\.$only\\."} -j"$(nproc)" --output-on-failure --verbose >"$BUILD/fuzz-ctest.log" 2>&1 || status=$?
grep -E "^[0-9]+: stat::|Test +#|tests passed|FAILED|SUMMARY|==[0-9]+==" "$BUILD/fuzz-ctest.log" || true
[ "$status" -eq 0 ] || echo "fuzz: a target failed; its log and input are under $BUILD/tests/fuzz/work/" >&2
exit "$status"
