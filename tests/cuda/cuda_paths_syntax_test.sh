#!/usr/bin/env bash
# The C++ of core/engine as a CUDA build compiles it (TUNEBENCH_WITH_CUDA, and the CUPTI and
# cuBLASLt paths), parsed by the compiler without building: every engine source in one translation
# unit (the unity build already requires them to share one) with -fsyntax-only, against the
# libtorch headers this build found (Debian's 1.13) and the CUDA toolkit's headers (cuda_runtime,
# cupti, cublasLt, nccl). What it cannot see: code under TUNEBENCH_TORCH_AT_LEAST(2, x) (the
# libtorch here is 1.13, so those lines are preprocessed away) and the GPU checks of tests/gpu,
# which call 2.x functions; docs/ARCHITECTURE.md says so. Skips (77) without the toolkit's headers.
#   cuda_paths_syntax_test.sh ROOT CXX TORCH_INCLUDE_DIRS (colon-separated)
set -euo pipefail
ROOT="$1"
CXX="$2"
IFS=: read -r -a torch_dirs <<< "${3:-}"
cuda_include=""
for c in "${CUDA_HOME:-}/include" "$(dirname "$(command -v nvcc 2>/dev/null || echo /nonexistent/x)")/../include" \
         /usr/local/cuda/include; do
  if [ -f "$c/cuda_runtime_api.h" ]; then cuda_include="$c"; break; fi
done
if [ -z "$cuda_include" ]; then
  echo "skipped: no CUDA toolkit headers (cuda_runtime_api.h in \$CUDA_HOME/include, next to nvcc or in /usr/local/cuda/include)"
  exit 77
fi
for h in nccl.h; do
  if [ ! -f "$cuda_include/$h" ]; then
    echo "skipped: $cuda_include has no $h (NCCL's headers beside the toolkit's), which the CUDA build needs"
    exit 77
  fi
done
defines=(-DTUNEBENCH_WITH_CUDA -DUSE_C10D_NCCL -DUSE_DISTRIBUTED)
[ -f "$cuda_include/cupti.h" ] && defines+=(-DTUNEBENCH_WITH_CUPTI)
[ -f "$cuda_include/cublasLt.h" ] && defines+=(-DTUNEBENCH_HAVE_CUBLASLT)
includes=(-I "$ROOT")
have_macros=no
for d in "${torch_dirs[@]}"; do
  [ -n "$d" ] || continue
  # The compiler's own system folders stay where they are (an -isystem /usr/include breaks libstdc++'s
  # #include_next).
  case "$d" in /usr/include | /usr/local/include) ;; *) includes+=(-isystem "$d") ;; esac
  [ -f "$d/c10/cuda/impl/cuda_cmake_macros.h" ] && have_macros=yes
done
# A CPU libtorch (Debian's) ships c10/cuda's headers but not the one its CUDA build generates
# (cuda_cmake_macros.h, a shared-library switch): tests/cuda/stub stands in for it.
[ "$have_macros" = yes ] || includes+=(-isystem "$ROOT/tests/cuda/stub")
includes+=(-isystem "$cuda_include")
unit="$(mktemp --suffix=.cpp)"
trap 'rm -f "$unit"' EXIT
(cd "$ROOT" && find core/engine -name '*.cpp' | sort | sed 's|.*|#include "&"|') > "$unit"
echo "parsing $(wc -l < "$unit") engine sources with ${defines[*]} against $cuda_include"
"$CXX" -std=c++17 -fsyntax-only -Wall -Wextra -Wno-unused-parameter -D_GLIBCXX_USE_CXX11_ABI=1 "${defines[@]}" \
  "${includes[@]}" "$unit"
echo "ok: the CUDA paths of core/engine parse"
