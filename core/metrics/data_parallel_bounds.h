// The overlap model of data parallelism, shared by the pair diagnosis (core/analysis) and the
// predictions (core/predict): collectives that can run behind compute are hidden up to the length
// of that compute, so at least max(0, F - overlappable) of a communication floor F (bus_bandwidth.h)
// stays exposed. Data parallelism over n GPUs, where one GPU computes one rank's share in C ms,
// then gives n C / (C + exposed) of one GPU's throughput.
//
// Deliberately only arithmetic: where C, F and the backward time come from is the caller's.
#pragma once

#include <cstdint>

namespace tunebench::metrics {

// The least exposed communication when a floor of floor_ms can hide behind overlappable_ms of
// compute: max(0, floor - overlappable).
double exposed_comm_lower_bound_ms(double floor_ms, double overlappable_ms);

// "Can data parallelism beat one GPU?" on n GPUs, for one GPU's compute time C of one rank's
// tokens, the communication floor F per step and the backward time it can hide behind.
struct DataParallelBounds {
  double exposed_min_ms = 0.0;        // exposed_comm_lower_bound_ms(F, backward)
  double speedup_no_overlap = 0.0;    // n C / (C + F): total throughput over one GPU's
  double speedup_full_overlap = 0.0;  // n C / (C + exposed_min)
  int64_t accum_for_90pct = 1;        // grad_accum factor keeping >= 90 % per GPU with nothing overlapped: k >= 9 F / C
};
DataParallelBounds data_parallel_bounds(int world_size, double compute_ms, double floor_ms, double backward_ms);

}  // namespace tunebench::metrics
