// How close to a large GEMM's throughput a GEMM of a given shape runs: the tile grid it is cut
// into (partial tiles at the edges compute zeros), the waves of tiles over the SMs (a last wave
// that fills few SMs leaves the rest idle; cuBLAS's stream-K and split kernels recover part of
// that), and the per-tile prologue and epilogue against the length of the K loop. A factor of 1 is
// a large GEMM (8192 cubed); the calibrated matmul efficiency is the peak fraction of that one, so
// a trial measured on one model's shapes predicts another's through this factor, not a copy of
// its own efficiency, and a fixed cost per GEMM. Constants (tile, K overhead, wave weight, fixed
// cost) are the catalogue's, fitted to measured GEMMs by lab/fit_models_probe.py (which holds
// the same formula).
#pragma once

#include "core/hardware/hardware.h"

namespace tunebench::predict {

// C[m, n] = A[m, k] B[k, n]: 2 m n k FLOPs.
struct GemmShape {
  double m = 0, n = 0, k = 0;
};

double gemm_shape_factor(const GemmShape& shape, int sms, const hardware::Catalogue& cat = hardware::catalogue());

}  // namespace tunebench::predict
