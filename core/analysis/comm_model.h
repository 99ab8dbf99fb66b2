// Collective bandwidth and the communication floor, in the nccl-tests conventions.
//
// For a collective of S bytes (nccl-tests "size", Interval::bytes) taking t seconds on n ranks:
// algbw = S / t and busbw = algbw * factor, where factor is 2(n-1)/n for all-reduce (a ring moves
// each byte out and back in), (n-1)/n for all-gather and reduce-scatter, and 1 for broadcast.
// busbw is comparable across n and to the link's rated bandwidth. The communication floor of a
// step is the time its collectives need at the measured busbw with nothing overlapped:
// sum(S * factor) / busbw. GB are 1e9 bytes throughout.
//
// The overlap model (used by the pair diagnosis and by core/predict): collectives that can run
// behind compute are hidden up to the length of that compute, so at least max(0, F - overlappable)
// of a floor F stays exposed. Data parallelism over n GPUs, where one GPU computes one rank's share
// in C ms, then gives n C / (C + exposed) of one GPU's throughput.
#pragma once

#include <cstdint>

#include "core/protocol/events.h"

namespace tunebench::analysis {

// The nccl-tests bus factor of a collective phase on n ranks (0 for non-collectives or n < 2).
double bus_factor(protocol::Phase collective, int world_size);
// busbw in GB/s of S bytes in duration_us; 0 when the duration is not positive.
double bus_bandwidth_gbps(protocol::Phase collective, int64_t bytes, int64_t duration_us, int world_size);
// Milliseconds to move bus_bytes (S * factor, summed) at busbw_gbps; 0 when busbw is not positive.
double comm_floor_ms(double bus_bytes, double busbw_gbps);

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

}  // namespace tunebench::analysis
