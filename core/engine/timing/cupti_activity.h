// The device's kernel, memcpy and memset records and the host's CUDA API calls of one sampled
// step, straight from CUPTI's activity API, detached again after the step.
//
// Why not Kineto's CUDA activities: once Kineto has profiled, CUPTI stays attached to the process
// (it finalizes CUPTI only with TEARDOWN_CUPTI=1, and then records no GPU activity in later
// profiles). Every later kernel launch pays for it: the unsampled steps of a launch-bound run were
// 41 % slower than untimed ones on an H200 (docs/BENCHMARKS.md). Here each sample enables the
// activity kinds, stop() flushes them, and detach() (cuptiFinalize) lets the steps between samples
// run without CUPTI. A later start() re-initialises CUPTI.
//
// Torch-free, and built only where CUPTI is found (TUNEBENCH_WITH_CUPTI); KernelSampler merges
// these records with the host ops that Kineto records without its CUDA part.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tunebench::engine::cupti {

enum class Kind : uint8_t { Kernel, Memcpy, Memset, Runtime, Driver };

struct Record {
  Kind kind = Kind::Kernel;
  int64_t start_ns = 0;  // CUPTI's clock (timestamp_ns())
  int64_t end_ns = 0;
  uint32_t correlation = 0;
  uint32_t thread_id = 0;  // the host thread (system id) of an API call
  std::string name;        // kernel name, "Memcpy HtoD" / "Memcpy DtoH" / ..., "Memset", or the API call
};

// Enables the activity kinds (attaching CUPTI to the process when it is not). False, with *error
// set, when CUPTI refuses.
bool start(std::string* error);
// Disables them, flushes every buffer and returns the records since start().
std::vector<Record> stop(std::string* error);
// Detaches CUPTI from the process (cuptiFinalize): launches cost what they cost without it
// until the next start(), which attaches it again and pays each kernel's first-launch set-up.
void detach(std::string* error);
// The records' clock now (the host's when CUPTI took our timestamp callback, else CUPTI's own),
// for mapping records onto the host clock.
int64_t timestamp_ns();

}  // namespace tunebench::engine::cupti
