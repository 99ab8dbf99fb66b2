// The parts of a torch.profiler (Kineto) Chrome-trace JSON that the import reads, as plain structs.
//
// TraceEvent is one element of "traceEvents" with only the fields and args the mapping uses
// (docs/IMPORT.md lists them); everything else (input shapes, strides, occupancy, ...) is skipped
// by the parser without being built. TraceHeader is what the top-level keys say about the run.
// The parser reuses one TraceEvent for every element, so neither grows with the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tunebench::import {

struct TraceEvent {
  char ph = 0;      // 'X' complete, 'M' metadata, 'i' instant, 's'/'f' flow, ...
  std::string cat;  // "cpu_op", "user_annotation", "cuda_runtime", "kernel", "gpu_memcpy", ...
  std::string name;
  std::optional<int64_t> pid, tid;  // numeric only; Kineto's "Spans"/"Traces" rows are strings
  std::optional<double> ts_us, dur_us;
  // args
  std::optional<int64_t> correlation;      // launch <-> GPU activity (also the ac2g flow id)
  std::optional<int64_t> external_id;      // CPU op <-> GPU activity / record_param_comms
  std::optional<int64_t> sequence_number;  // autograd sequence number of an op recorded with grad on
  std::optional<int64_t> fwd_thread_id;    // 0 on forward ops, the forward thread on backward ops
  std::optional<int64_t> device;           // GPU index of an activity
  std::optional<int64_t> stream;
  std::optional<int64_t> in_nelems, out_nelems, group_size;  // collectives
  // cuda_sync "Stream Wait Event" (Kineto with enable_cuda_sync_events): the stream waited on and
  // the correlation id of the cudaEventRecord whose event it waited for.
  std::optional<int64_t> wait_on_stream, wait_on_record_correlation;
  std::string collective;                                    // "allreduce", "_allgather_base", ...
  std::string dtype;                                         // "Float", "BFloat16", ...

  // Empties every field, keeping the strings' storage (one TraceEvent serves the whole file).
  void clear() {
    ph = 0;
    cat.clear();
    name.clear();
    collective.clear();
    dtype.clear();
    pid = tid = correlation = external_id = sequence_number = fwd_thread_id = device = stream = in_nelems = out_nelems =
        group_size = wait_on_stream = wait_on_record_correlation = std::nullopt;
    ts_us = dur_us = std::nullopt;
  }
};

struct DeviceProperties {
  int64_t id = -1;
  std::string name;
  int64_t total_memory_bytes = 0;
};

struct TraceHeader {
  bool root_is_object = false;
  bool has_trace_events = false;  // a "traceEvents" array was found
  std::string trace_id;
  int64_t schema_version = 0;
  std::optional<int64_t> base_time_ns;  // add to ts (µs) * 1000 for nanoseconds since the Unix epoch
  int64_t cuda_runtime_version = 0;     // 13000 = CUDA 13.0
  int64_t cuda_driver_version = 0;
  std::vector<DeviceProperties> devices;
  bool has_distributed_info = false;
  std::optional<int64_t> rank, world_size;
  std::string backend;
  std::string nccl_version;
};

}  // namespace tunebench::import
