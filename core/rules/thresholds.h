// Thresholds the benchmark acts on and the diagnosis judges by, defined once.
#pragma once

namespace tunebench::rules {

// A step whose GPU idles (not waiting for data) at least this share of it is host-bound: the
// diagnosis says so (core/analysis/diagnosis.cpp), and the worker's kernel sampler detaches CUPTI
// after such a sample, whose launches would make every later step pay (timing/kernel_sampler.h).
inline constexpr double kIdleShare = 0.10;

}  // namespace tunebench::rules
