#include "core/predict/gemm_shape.h"

#include <algorithm>
#include <cmath>

namespace tunebench::predict {

namespace {

struct Tiling {
  double tile_m, tile_n, k_overhead, wave_weight, fixed_flops;
};

// Output tiles of tile_m x tile_n over `sms` SMs: the fraction of issued tile work that is useful.
double grid_factor(double m, double n, int sms, const Tiling& t) {
  const double tm = std::ceil(m / t.tile_m), tn = std::ceil(n / t.tile_n);
  const double padding = (m * n) / (tm * t.tile_m * tn * t.tile_n);
  const double tiles = tm * tn;
  const double waves = std::ceil(tiles / sms);
  const double wave_fill = tiles / (waves * sms);
  return padding * (1.0 - t.wave_weight * (1.0 - wave_fill));
}

double factor(const GemmShape& s, int sms, const Tiling& t) {
  // cuBLAS picks the orientation (and so which side the long tile edge lies along) that suits.
  const double grid = std::max(grid_factor(s.m, s.n, sms, t), grid_factor(s.n, s.m, sms, t));
  // A fixed cost per GEMM (launch, ramp-up and drain), counted in FLOPs of a large GEMM's rate:
  // what makes a 2048-cubed GEMM run at half a large one's rate on an H200.
  const double work = 2 * s.m * s.n * s.k;
  return grid * s.k / (s.k + t.k_overhead) * work / (work + t.fixed_flops);
}

}  // namespace

double gemm_shape_factor(const GemmShape& shape, int sms, const hardware::Catalogue& cat) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) return 1.0;
  if (sms <= 0) sms = 132;  // a GPU of unknown SM count: H100/H200's
  const Tiling t{cat.constant("gemm_tile_m"), cat.constant("gemm_tile_n"), cat.constant("gemm_k_overhead"),
                 cat.constant("gemm_wave_weight"), cat.constant("gemm_fixed_gflop") * 1e9};
  const double large = factor(GemmShape{8192, 8192, 8192}, sms, t);
  return std::min(1.0, factor(shape, sms, t) / large);
}

}  // namespace tunebench::predict
