// GPU busy and GPU idle of one step, from the device's own activity records.
//
// The one definition (docs/ANALYSIS.md, "GPU busy and GPU idle"):
//   - GPU busy is the union of the step's kernel, memcpy and memset intervals on the device,
//     collectives included, clipped to the step window [start_us, end_us);
//   - every other instant of the window is GPU idle. Each gap is classified, after HTA's
//     idle-time breakdown, with the host's own synchronisations added:
//       LaunchGap  the next activity had already been launched when the GPU ran dry and started
//                  within kLaunchLatencyUs of it: the latency between back-to-back kernels, which
//                  CUDA graphs reduce (also while the host sits in a synchronisation: the device's
//                  queue was not empty);
//       DependencyWait  the next activity had already been launched but started later than a
//                  launch latency: something held it (a cross-stream event wait, a collective, a
//                  copy); labelled with the call or op that made the dependency when the records
//                  show it (stream_wait_label), empty otherwise. Work launched while the GPU sat
//                  idle that starts more than a launch latency after its launch call returned
//                  splits the gap there: the part before is classified as below (the host had
//                  not launched it yet), the part after is a dependency wait;
//       SyncWait   otherwise, the host was inside a blocking call when the GPU ran dry
//                  (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, a
//                  blocking copy to the host); labelled with the op that issued it;
//       HostWait   otherwise: the host had not launched the next work yet; labelled with the CPU
//                  op that overlapped the gap most (empty: no op, framework code between ops).
//   - The compute lane of such a step holds only the time compute kernels ran (runs of one phase)
//     and the gaps; a collective with no compute kernel beside it is exposed (exposed_comm.h).
// The worker (kernel-sampled steps, core/engine/timing/kernel_sampler) and the trace import
// (core/import/step_builder) both call summarise_gpu_activity, so native and imported trials share
// every figure. Nothing here reads traces or talks to a profiler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/protocol/events.h"

namespace tunebench::metrics {

// One kernel, memcpy or memset on the device, on the host clock.
struct DeviceActivity {
  int64_t start_us = 0;
  int64_t end_us = 0;
  protocol::Lane lane = protocol::Lane::Compute;   // Comm: a collective; Host: a host-to-device copy
  protocol::Phase phase = protocol::Phase::Other;  // compute lane: the phase its launch ran in
  int64_t launch_us = -1;                          // when the host launched it; -1 unknown
  int64_t stream = -1;                             // the stream it ran on; -1 unknown
  int64_t launch_end_us = -1;                      // when that launch call returned; -1 unknown
};

// A cudaStreamWaitEvent: from `call_us` on, work launched later on `stream` waits for the event
// last recorded on `on_stream` (by a cudaEventRecord the host called at `record_us`).
struct StreamWait {
  int64_t call_us = 0;     // when the host called cudaStreamWaitEvent
  int64_t stream = -1;     // the stream that waits; -1 unknown (no CUDA sync records in the trace)
  int64_t on_stream = -1;  // the stream the event was recorded on; -1 unknown
  int64_t record_us = -1;  // when the host called the matching cudaEventRecord; -1 unknown
  std::string op;          // the CPU op around the wait call; empty: none
};

// A CPU op or a blocking host call, on the host clock.
struct HostCall {
  int64_t start_us = 0;
  int64_t end_us = 0;
  int64_t tid = 0;
  std::string name;
};

struct StepActivity {
  int64_t start_us = 0;  // the step window
  int64_t end_us = 0;
  std::vector<DeviceActivity> activities;
  std::vector<HostCall> syncs;     // blocking synchronisations; name: the op that issued them
  std::vector<HostCall> host_ops;  // CPU ops of any nesting; the outermost of each thread name host waits
  std::vector<StreamWait> stream_waits;  // cross-stream dependencies: what a dependency wait is named after
};

struct GpuActivitySummary {
  int64_t busy_us = 0;  // union of every activity within the window
  int64_t idle_us = 0;  // window - busy_us
  // Compute lane: runs of one phase while a compute activity ran, and the GPU-idle gaps
  // (HostWait, LaunchGap, SyncWait) covering the rest of the window that no activity covers.
  // Host lane: host-to-device copy runs. Collectives are the caller's own comm intervals.
  std::vector<protocol::Interval> intervals;
};

// A gap with no launch information shorter than this is a launch gap, longer a host wait.
inline constexpr int64_t kShortGapUs = 10;
// The longest a queued activity can start after the GPU ran dry and still be launch latency; a
// later start is a dependency wait. Measured: the gaps between already-launched activities of the
// four H200 traces of tests/data/traces (gpt-gpubound, ddp-nw4 with both ranks, single-nw4, cnn-b8; 2,943 gaps,
// under the profiler) have a median of 1.4-5.9 µs, a 99th percentile of 2.6-16.4 µs and a maximum
// of 33.6 µs (`lab/queued_gaps.py`; docs/ANALYSIS.md, "GPU busy and GPU idle"). 50 µs sits above
// every one of them and far below the millisecond waits on other streams.
inline constexpr int64_t kLaunchLatencyUs = 50;

GpuActivitySummary summarise_gpu_activity(StepActivity step);

// Which phase wins where two intervals of one lane overlap: recompute above backward (it is carved
// out of it), then backward, forward, optimizer, data wait, host-to-device, the rest.
int lane_priority(protocol::Phase phase);
// Splits the overlapping intervals of one lane so that each instant belongs to the highest-priority
// interval covering it (the later one on a tie); touching pieces of one interval are joined again.
std::vector<protocol::Interval> flatten_lane(std::vector<protocol::Interval> in);

// CUDA runtime/driver calls that block the host until the device is done (cudaStreamSynchronize,
// cudaDeviceSynchronize, cudaEventSynchronize, the blocking cudaMemcpy...): a GPU-idle gap that
// starts while one is in progress, before the next work was launched, is a SyncWait.
bool is_sync_call(const std::string& name);
// Words for a dependency wait: "cudaStreamWaitEvent: stream 7 waited for stream 13, whose event the
// host recorded 5.0 ms after the GPU ran dry (in aten::add_)". `gap_start_us`: when the GPU ran dry.
std::string stream_wait_label(const StreamWait& wait, int64_t gap_start_us);
// A CPU op that runs a collective (c10d::allreduce_, nccl:all_reduce, gloo:..., record_param_comms).
bool is_collective_op(const std::string& name);
// A CPU op or runtime call that copies memory (aten::copy_, aten::_to_copy, cudaMemcpy*).
bool is_copy_op(const std::string& name);
// Words for the op behind a synchronisation: "aten::_local_scalar_dense" -> ".item() (aten::_local_scalar_dense)".
std::string describe_sync_op(const std::string& op);

}  // namespace tunebench::metrics
