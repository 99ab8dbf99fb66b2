#!/usr/bin/env bash
# Tunebench developer entry point: installs what is missing, configures, builds, then runs.
#
#   scripts/tunebench.sh gui     build and open the workbench (on a GPU machine with a CUDA
#                                libtorch also the CUDA worker, which the GUI then uses)
#   scripts/tunebench.sh test    build and run the whole test suite and a short fuzzing smoke
#                                (non-zero exit on failure)
#   scripts/tunebench.sh build   only install and build
#   scripts/tunebench.sh deps    only install the Debian packages
#
# Works as root or as a normal user with sudo. Idempotent: packages already installed are not
# touched (and nothing is printed), an unchanged tree is not rebuilt (ninja + ccache).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${TUNEBENCH_BUILD_DIR:-$ROOT/build}"
# What the build needs; then what only the tests need, which `test` installs while it builds.
BUILD_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  qt6-base-dev qt6-svg-dev libqcustomplot-dev fonts-dejavu-core
  libtorch-dev libgloo-dev libopenblas0-pthread
  libsqlite3-dev libsqlitecpp-dev sqlite3 nlohmann-json3-dev libcli11-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)
TEST_PACKAGES=(
  clang libclang-rt-14-dev   # the fuzzers' build (scripts/fuzz.sh)
  xvfb xauth
  chromium   # the HTML report renders in a real browser (tests/app/cli/cli_report_browser_test.sh)
  openssh-server openssh-client   # the ssh launcher's end-to-end test (tests/app/cli/cli_ssh_test.sh)
  slurmctld slurmd slurm-client munge   # the slurm launcher's one-node cluster (cli_slurm_test.sh)
  python3-torch   # your own script under tunebench_probe, with real PyTorch (tests/app/probe, cli_script_test.sh)
)

log() { printf '\033[1m[tunebench]\033[0m %s\n' "$*" >&2; }

# install_deps PACKAGE...: installs those not installed yet.
install_deps() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "need root or sudo to install: ${missing[*]}"; exit 1; }
    sudo=(sudo)
  fi
  log "installing ${#missing[@]} Debian packages: ${missing[*]}"
  [ -n "${APT_UPDATED:-}" ] || "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  APT_UPDATED=1
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

# Seconds since the last call, for the phase times `test` prints (where a fresh setup spends them).
phase_start=$SECONDS
phase() {
  log "$1: $((SECONDS - phase_start)) s"
  phase_start=$SECONDS
}

# build [TARGET...]: everything, or only the given targets (and what they need).
build() {
  # Paths relative to the checkout in ccache's keys: another clone of the same commit hits the cache.
  # Depend mode: ccache hashes the headers the compiler lists instead of preprocessing every file a
  # second time (a miss cost 20 % more than the compile alone; in depend mode 4 %).
  export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
  if [ ! -f "$BUILD/build.ninja" ]; then
    log "configuring $BUILD"
    # Line tables only (-g1): backtraces keep file:line, and a file compiles a third faster than
    # with full debug information. Unity build: each target compiles its files eight to a
    # translation unit, so the headers and templates they share are parsed and instantiated once
    # (docs/BENCHMARKS.md, "Build time"). For a debugger or quick edit-compile cycles, configure a
    # build directory of your own (-DCMAKE_BUILD_TYPE=Debug, no unity build).
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_UNITY_BUILD=ON -DTUNEBENCH_BUILD_TESTS=ON >/dev/null
  fi
  # Two cores: libtorch translation units need ~1.5 GB each; -j follows the core count.
  cmake --build "$BUILD" ${1:+--target "$@"} -- -j"$(nproc)"
}

# A GPU machine: an NVIDIA driver and a CUDA libtorch (TUNEBENCH_LIBTORCH=/path/to/libtorch, or the
# one of a Python PyTorch install) also get the CUDA worker in build-cuda/, which the GUI then uses.
# Prints the libtorch CMake prefix; says in one line what is missing when there is a driver but none.
cuda_libtorch_prefix() {
  command -v nvidia-smi > /dev/null 2>&1 || [ -e /dev/nvidiactl ] || return 1
  if [ -n "${TUNEBENCH_LIBTORCH:-}" ]; then
    [ -d "$TUNEBENCH_LIBTORCH" ] || { log "TUNEBENCH_LIBTORCH=$TUNEBENCH_LIBTORCH is not a folder"; return 1; }
    echo "$TUNEBENCH_LIBTORCH"
    return 0
  fi
  if python3 -c 'import sys, torch; sys.exit(0 if torch.version.cuda else 1)' > /dev/null 2>&1; then
    python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'
    return 0
  fi
  log "NVIDIA driver found but no CUDA libtorch: pip install torch (a CUDA build) or set TUNEBENCH_LIBTORCH=/path/to/libtorch for the GPU worker; using the CPU worker"
  return 1
}

build_cuda_worker() {
  local prefix="$1" cuda_build="${TUNEBENCH_CUDA_BUILD_DIR:-$ROOT/build-cuda}"
  if [ ! -f "$cuda_build/build.ninja" ]; then
    log "configuring $cuda_build (CUDA worker against $prefix)"
    TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}" cmake -S "$ROOT" -B "$cuda_build" -G Ninja \
      -DCMAKE_BUILD_TYPE=Release -DTUNEBENCH_BUILD_GUI=OFF -DTUNEBENCH_BUILD_TESTS=OFF \
      -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
  fi
  cmake --build "$cuda_build" --target tunebench-worker -- -j"$(nproc)"
  CUDA_WORKER="$cuda_build/app/worker/tunebench-worker"
}

cmd="${1:-gui}"
shift || true
case "$cmd" in
  deps) install_deps "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}" ;;
  build) install_deps "${BUILD_PACKAGES[@]}"; build ;;
  gui)
    # Only what the window runs: the GUI and the CPU worker (the tests and the CLI wait for `test`).
    install_deps "${BUILD_PACKAGES[@]}"; build tunebench tunebench-worker
    if prefix="$(cuda_libtorch_prefix)"; then
      build_cuda_worker "$prefix"
      export TUNEBENCH_WORKER="${TUNEBENCH_WORKER:-$CUDA_WORKER}"
    fi
    exec "$BUILD/app/gui/tunebench" "$@" ;;
  test)
    start=$SECONDS
    install_deps "${BUILD_PACKAGES[@]}"
    # The test-only packages (clang, chromium, slurm, ...) download and unpack while the build
    # compiles: nothing the build configures or compiles uses them.
    deps_log="${TMPDIR:-/tmp}/tunebench-test-deps.$$.log"
    (install_deps "${TEST_PACKAGES[@]}") >"$deps_log" 2>&1 &
    test_deps=$!
    phase "build packages"
    build
    # The suite runs on the CPU worker; a GPU machine also gets the CUDA worker built (and so checked).
    if prefix="$(cuda_libtorch_prefix)"; then build_cuda_worker "$prefix"; fi
    phase "build"
    wait "$test_deps" || { log "installing the test packages failed:"; cat "$deps_log" >&2; exit 1; }
    cat "$deps_log" >&2
    rm -f "$deps_log"
    phase "test packages (after the build)"
    # The fuzzers' clang build (build-fuzz/) compiles while the suite runs, in the idle scheduling
    # class: it gets only the CPU time the tests leave (many wait on processes and sockets), and a
    # test that measures what a free core gains (RUN_SERIAL) still finds one. Two tests per core:
    # most of them wait, and none depends on the machine being idle (docs/RELIABILITY.md).
    fuzz_log="$BUILD/fuzz-build.log"
    idle=(nice -n 19)
    chrt --idle 0 true 2>/dev/null && idle=(chrt --idle 0 nice -n 19)
    "${idle[@]}" "$ROOT/scripts/fuzz.sh" build >"$fuzz_log" 2>&1 &
    fuzz_build=$!
    status=0
    (cd "$BUILD" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j"$((2 * $(nproc)))" --timeout 900 -LE quiet "$@") ||
      status=$?
    phase "tests"
    wait "$fuzz_build" || { log "the fuzzers' build failed: $fuzz_log"; tail -20 "$fuzz_log" >&2; exit 1; }
    phase "fuzzers' build (after the tests)"
    # Tests labelled `quiet` measure timings and need the machine to themselves.
    (cd "$BUILD" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 900 -L quiet "$@") || status=$?
    phase "quiet tests"
    [ "$status" -eq 0 ] || exit "$status"
    # A few seconds of libFuzzer per parser; ctest above replayed their seeds.
    "$ROOT/scripts/fuzz.sh" smoke
    phase "fuzz smoke"
    log "test: $((SECONDS - start)) s in all" ;;
  *) echo "usage: $0 {gui|test|build|deps}" >&2; exit 2 ;;
esac
