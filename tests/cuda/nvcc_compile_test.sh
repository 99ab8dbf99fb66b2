#!/usr/bin/env bash
# Every CUDA source of the tree compiles with the machine's nvcc, for the GPUs the worker is built
# for (sm_90: H100/H200; scripts/gpu-bench.sh's TORCH_CUDA_ARCH_LIST). Compile only: nothing runs.
# To PTX (--ptx): the C++ and CUDA front end checks every line; ptxas, which would take 60 % more
# of a CI core (fused_kernels.cu: 30 s of CPU against 12 s), runs in the GPU machine's build.
# A .cu file includes CUDA's headers and its own only (core/engine/kernels/fused_kernels.cu), so no
# libtorch is needed. Skips (77) without nvcc, or with one that cannot target sm_90.
#   nvcc_compile_test.sh ROOT        (NVCC=/path/to/nvcc to choose one)
set -euo pipefail
ROOT="$1"
NVCC="${NVCC:-}"
if [ -z "$NVCC" ]; then
  for c in "$(command -v nvcc 2>/dev/null || true)" /usr/local/cuda/bin/nvcc; do
    if [ -n "$c" ] && [ -x "$c" ]; then NVCC="$c"; break; fi
  done
fi
if [ -z "$NVCC" ]; then
  echo "skipped: no nvcc on PATH or at /usr/local/cuda/bin/nvcc (set NVCC=...): the CUDA sources were not compiled"
  exit 77
fi
if ! "$NVCC" --list-gpu-arch 2>/dev/null | grep -qx "compute_90"; then
  echo "skipped: $NVCC cannot target sm_90 ($("$NVCC" --version | tail -1))"
  exit 77
fi
echo "nvcc: $NVCC ($("$NVCC" --version | grep -o 'release [0-9.]*'))"
mapfile -t sources < <(cd "$ROOT" && find core app -name '*.cu' | sort)
if [ "${#sources[@]}" -eq 0 ]; then
  echo "FAIL: no .cu file under core/ or app/ (the kernels moved? update this test)"
  exit 1
fi
status=0
for src in "${sources[@]}"; do
  # The flags of tunebench_kernels (core/engine/CMakeLists.txt): C++17, sm_90.
  if "$NVCC" -std=c++17 -arch=sm_90 -I "$ROOT" --ptx "$ROOT/$src" -o /dev/null; then
    echo "ok: $src"
  else
    echo "FAIL: $src does not compile with $NVCC"
    status=1
  fi
done
exit $status
