// The GPU probes' (scripts/*_probe.cu) error checks: a failed CUDA or cuBLAS call prints where and
// why, and ends the probe.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e = (x);                                                                     \
    if (e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// cuBLAS and cuBLASLt statuses (0 is success in both).
#define CHECK_BLAS(x)                                                           \
  do {                                                                          \
    int s = static_cast<int>(x);                                                \
    if (s != 0) {                                                               \
      std::fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, s); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)
