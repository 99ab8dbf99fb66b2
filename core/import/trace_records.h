// TraceRecords: what TraceCollector keeps of one rank's trace, compactly, for StepBuilder.
//
// Only the events the mapping needs survive the parse, each as a few integers: step markers,
// the CPU spans that give GPU work its phase (backward, optimizer, recomputed forward ops, data
// loading, annotations), every CUDA launch (correlation id, time, thread) and every GPU activity.
// Times are nanoseconds on the trace's clock (ts * 1000); the record sizes are what bounds the
// import's memory (docs/IMPORT.md, "Streaming and memory"). Names are interned, never stored per event.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/protocol/events.h"

namespace tunebench::import {

struct CpuSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t tid = 0;
  int32_t label = -1;  // annotations: index into TraceRecords::labels
};

struct StepMarker {
  int64_t number = 0;  // N of "ProfilerStep#N"
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct Launch {
  int64_t correlation = 0;
  int64_t ts_ns = 0;
  int64_t tid = 0;
  int64_t end_ns = 0;  // when the launch call returned
};

// What a collective moved: from the NCCL kernel's own args (PyTorch >= 2.4) or from the
// record_param_comms op with the same External id.
struct CommArgs {
  protocol::Phase phase = protocol::Phase::Other;
  int64_t bytes = 0;       // nccl-tests "size": the larger of input and output, times the dtype size
  int32_t group_size = 0;  // ranks in the process group; 0 unknown
  int32_t name = -1;       // collective name ("allreduce"), index into TraceRecords::labels
  int8_t dtype = -1;       // index into TraceRecords::dtypes, -1 unknown
  bool known = false;      // the args were there
};

enum class ActivityKind : uint8_t { Kernel, HostToDevice, Copy, Collective };

struct GpuActivity {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t correlation = 0;
  int64_t external_id = -1;
  int32_t device = -1;
  int32_t stream = -1;
  ActivityKind kind = ActivityKind::Kernel;
  CommArgs comm;  // kind Collective only
};

// A cudaStreamWaitEvent call; with Kineto's CUDA sync records (enable_cuda_sync_events) also the
// stream that waited, the stream waited on and the cudaEventRecord it waited for.
struct StreamWaitCall {
  int64_t correlation = 0;
  int64_t ts_ns = 0;
  int64_t tid = 0;
};
struct StreamWaitSync {
  int64_t stream = -1, on_stream = -1, record_correlation = -1;
};

struct TraceRecords {
  std::vector<StepMarker> steps;
  std::vector<CpuSpan> data_waits;   // enumerate(DataLoader)#...
  std::vector<CpuSpan> optimizer;    // Optimizer.step#..., Optimizer.zero_grad#...
  std::vector<CpuSpan> backward;     // autograd::engine::evaluate_function: ...
  std::vector<CpuSpan> forward_ops;  // ops recorded with grad on (Sequence number, Fwd thread id 0)
  std::vector<CpuSpan> annotations;  // other user annotations (labels of collectives)
  std::vector<CpuSpan> ops;          // every cpu_op (label: its name): what the host ran in a GPU-idle gap
  std::vector<CpuSpan> syncs;        // blocking CUDA calls (label: cudaStreamSynchronize, ...): causes of GPU idle
  std::vector<CpuSpan> gloo_collectives;  // "gloo:all_reduce" spans (label: the name): Gloo's collectives on the host
  std::vector<Launch> launches;      // cuda_runtime / cuda_driver events with a correlation id
  std::vector<StreamWaitCall> stream_waits;                  // cudaStreamWaitEvent calls
  std::unordered_map<int64_t, StreamWaitSync> wait_syncs;    // cuda_sync "Stream Wait Event" by correlation
  std::unordered_map<int64_t, int64_t> event_records;        // cudaEventRecord correlation -> call time (ns)
  std::vector<GpuActivity> activities;
  std::unordered_map<int64_t, CommArgs> param_comms;  // record_param_comms by External id

  std::vector<std::string> labels;  // interned annotation and collective names
  std::vector<std::string> dtypes;  // interned dtype names of collectives

  // Counts and facts the messages and the known settings use.
  int64_t events = 0;
  int64_t cpu_events = 0;                             // cpu_op + user_annotation
  int64_t gpu_events = 0;                             // kernels, memcpy, memset
  int64_t first_ns = INT64_MAX, last_ns = INT64_MIN;  // window of every timed CPU and GPU event
  int64_t pid = 0;
  bool single_process_loader = false;  // _SingleProcessDataLoaderIter: num_workers 0
  bool multi_process_loader = false;
  bool ddp = false;             // DistributedDataParallel.forward
  bool fsdp = false;            // FSDP:: (FSDP2) or FullyShardedDataParallel (FSDP1) annotations
  std::string optimizer_class;  // "AdamW" of Optimizer.step#AdamW.step
  std::set<std::string> unknown_dtypes;
  // An accelerator that is not a CUDA GPU, from its event categories ("MTIA" of mtia_runtime, ...);
  // empty: none seen.
  std::string other_accelerator;
};

}  // namespace tunebench::import
