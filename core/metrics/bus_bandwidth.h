// Collective bandwidth and the communication floor, in the nccl-tests conventions.
//
// For a collective of S bytes (nccl-tests "size", Interval::bytes; all-gather: the gathered output)
// taking t seconds on n ranks: algbw = S / t and busbw = algbw * factor, where factor is 2(n-1)/n
// for all-reduce (a ring moves each byte out and back in), (n-1)/n for all-gather and
// reduce-scatter, and 1 for broadcast. busbw is comparable across n and to the link's rated
// bandwidth. The communication floor of a step is the time its collectives need at the measured
// busbw with nothing overlapped: sum(S * factor) / busbw. GB are 1e9 bytes throughout.
#pragma once

#include <cstdint>
#include <vector>

#include "core/protocol/events.h"

namespace tunebench::metrics {

// The bus factor of a collective phase on n ranks; 0 for non-collectives and for n < 2 (one rank
// moves nothing over a bus).
double bus_factor(protocol::Phase collective, int world_size);
// busbw in GB/s of S bytes in duration_us; 0 when the duration or the size is not positive.
double bus_bandwidth_gbps(protocol::Phase collective, int64_t bytes, int64_t duration_us, int world_size);
// Milliseconds to move bus_bytes (S * factor, summed) at busbw_gbps; 0 when busbw is not positive.
double comm_floor_ms(double bus_bytes, double busbw_gbps);

// The message sizes a link probe all-reduces: min_bytes doubling up to max_bytes (at least one
// element), each rounded down to whole elements. The worker's probe (core/engine/comm/link_probe)
// visits exactly these; the GUI counts them for its progress.
std::vector<int64_t> probe_sizes(int64_t min_bytes, int64_t max_bytes, int64_t element_bytes);

}  // namespace tunebench::metrics
