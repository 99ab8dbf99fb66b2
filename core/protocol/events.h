// The Tunebench event protocol: what a worker rank tells the workbench, one JSON object per line.
//
// Plain copyable structs, shared by the worker (which writes them) and the GUI, CLI and store (which
// read them). docs/PROTOCOL.md documents every field with its unit; keep the two in step.
// This header deliberately knows nothing about I/O: event_writer.h turns an Event into a line,
// event_reader.h turns a byte stream back into Events.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace tunebench::protocol {

// Bumped when a field changes meaning or a required field is added. Readers accept newer versions
// best-effort (unknown fields are ignored) and report that they did.
inline constexpr int kSchemaVersion = 1;

// Most ranks a trial can have (config::validate holds runs to it): a rank or world size beyond it
// in an event is a bad event, not a number to compute with.
inline constexpr int kMaxWorldSize = 1024;

// ---- timeline ----------------------------------------------------------------------------------

enum class Lane { Host, Compute, Comm };
// Every lane, in the order a rank's lanes are drawn and written (host, compute, comm).
inline constexpr Lane kLanes[] = {Lane::Host, Lane::Compute, Lane::Comm};

// What a rank was doing during one interval. Comm phases are collectives.
enum class Phase {
  DataWait,       // host: waiting for the data loader to hand over a batch
  HostToDevice,   // host: issuing the input copy to the device (pinned: asynchronous)
  Forward,        // compute
  Backward,       // compute (includes recompute when checkpointing, see Recompute)
  Recompute,      // compute: forward recomputation inside backward (activation checkpointing)
  Optimizer,      // compute: unscale, clip, optimizer step, zero grad
  AllReduce,      // comm: DDP bucket all-reduce
  AllGather,      // comm: FSDP parameter all-gather
  ReduceScatter,  // comm: FSDP gradient reduce-scatter
  Broadcast,      // comm: parameter broadcast at start
  Other,
  // GPU idle (compute lane, kernel-sampled steps only): no kernel, copy or memset runs on the
  // device. metrics/gpu_activity.h classifies each gap; the label names the CPU op behind it.
  HostWait,   // the host had not issued the next work yet (label: the CPU op it was running)
  LaunchGap,  // the next work was already issued: launch latency between consecutive kernels
  SyncWait,   // the host was blocked in a synchronisation (label: the op that issued it)
  // the next work was already issued but held longer than a launch latency by a dependency: a
  // cross-stream event wait, a collective or a copy (label: the call or op that made it, when seen)
  DependencyWait,
};

std::string_view to_string(Lane lane);
std::string_view to_string(Phase phase);
std::optional<Lane> lane_from_string(std::string_view s);
std::optional<Phase> phase_from_string(std::string_view s);
// The lane a phase belongs on (collectives -> Comm, data/h2d -> Host, the rest -> Compute).
Lane default_lane(Phase phase);
// HostWait, LaunchGap, SyncWait or DependencyWait: an interval in which the GPU ran nothing.
bool is_gpu_idle(Phase phase);

struct Interval {
  Lane lane = Lane::Compute;
  Phase phase = Phase::Other;
  int64_t start_us = 0;  // host clock (same clock as Header::t_us)
  int64_t end_us = 0;
  std::string label;        // bucket or unit name for collectives ("bucket 3", "block 7"), else empty
  int64_t bytes = 0;        // collectives: payload bytes per rank (nccl-tests "size"), else 0
  double busbw_gbps = 0.0;  // collectives: achieved bus bandwidth, nccl-tests definition, GB/s (1e9)
  int64_t duration_us() const { return end_us - start_us; }
};

// ---- events ------------------------------------------------------------------------------------

// Fields every event carries.
struct Header {
  int v = kSchemaVersion;
  std::string trial;  // trial id the runner assigned (may be empty for ad-hoc runs)
  int rank = 0;
  int64_t t_us = 0;   // microseconds since the Unix epoch on the rank's host clock
};

struct Hello {
  std::string host;
  int64_t pid = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string device;        // "NVIDIA H200" or "cpu"
  std::string device_kind;   // "cuda" | "cpu"
  int64_t device_memory_bytes = 0;
  std::string driver;        // NVIDIA driver version, empty on CPU
  std::string cuda;          // CUDA runtime version libtorch was built with, empty on CPU
  std::string cudnn;
  std::string nccl;
  std::string torch;         // libtorch version
  std::string backend;       // "nccl" | "gloo" | "none"
  std::map<std::string, std::string> env;  // NCCL_* / TORCH_NCCL_* variables in effect
  std::string topology;      // GPU interconnect as NVML reports it, e.g. "GPU0: 18 NVLink links; GPU0-GPU1: PCIe node"
  nlohmann::json config = nlohmann::json::object();  // the TrialConfig, as config/trial_config JSON
  int64_t clock_offset_us = 0;  // add to this rank's times to get rank 0's host clock
};

struct ModelInfo {
  int64_t parameters = 0;         // all parameters
  int64_t matmul_parameters = 0;  // parameters excluding the embedding table
  double flops_per_token = 0.0;   // training FLOPs (forward + backward) per token
  std::string flops_formula;      // e.g. "6*N_matmul + 12*L*D*T (PaLM appendix B)"
  int64_t predicted_peak_bytes = 0;  // per-rank prediction before launch, 0 if unknown
  int64_t parameter_bytes = 0;       // per rank, as stored (sharded for FSDP)
  std::string attention;             // SDPA kernel that runs and why: "cudnn (auto: ... , padded to 104)"
};

struct MemoryStats {
  int64_t allocated_bytes = 0;  // at step end
  int64_t reserved_bytes = 0;   // caching allocator reserve at step end (CPU: RSS)
  int64_t peak_bytes = 0;       // peak allocated since the start of the run
  int64_t alloc_retries = 0;    // cudaMalloc retries after freeing cache (a sign of fragmentation)
};

// Live allocator bytes by what holds them, at one moment of a memory-sampled step (the worker's
// CUDA build reads the caching allocator's snapshot; metrics/memory_categories.h attributes its
// blocks). The seven categories sum to the allocated bytes; reserved_free_bytes is the reserve no
// tensor holds (fragmentation and cache) beside them.
struct MemoryCategories {
  std::string phase;                // when the snapshot was taken: "forward", "backward", "optimizer", "oom"
  int64_t parameters_bytes = 0;     // blocks holding the parameters (and their 16-bit / float8 copies)
  int64_t gradients_bytes = 0;      // blocks holding the gradients
  int64_t optimizer_bytes = 0;      // blocks holding the optimizer state (AdamW moments, steps)
  int64_t activations_bytes = 0;    // blocks the forward allocated that are still alive (saved for backward)
  int64_t temporaries_bytes = 0;    // blocks allocated in this step outside the forward (backward and optimizer temporaries, workspaces)
  int64_t communication_bytes = 0;  // blocks holding collective buffers (DDP buckets, FSDP gathers)
  int64_t unattributed_bytes = 0;   // live blocks none of the above explains (older than the step, not known)
  int64_t reserved_free_bytes = 0;  // reserved by the allocator, held by no tensor
  int64_t allocated_bytes() const {
    return parameters_bytes + gradients_bytes + optimizer_bytes + activations_bytes + temporaries_bytes +
           communication_bytes + unattributed_bytes;
  }
  bool operator==(const MemoryCategories& o) const;
};

// Where a memory timeline's reading falls in its phase.
enum class MemoryPoint { Start, Peak, End };
std::string_view to_string(MemoryPoint point);
std::optional<MemoryPoint> memory_point_from_string(std::string_view s);

// One reading of the caching allocator in a memory-sampled step (Step::memory_timeline): the
// allocated and reserved bytes at a phase's start or end, or the phase's peak (the allocator's peak
// counters, reset at the phase's start). The allocator counts on the host as work is queued, so a
// boundary's bytes belong to its host time (the device runs the work later).
struct MemoryTimelinePoint {
  Phase phase = Phase::Forward;  // forward, backward or optimizer (is_memory_timeline_phase)
  MemoryPoint point = MemoryPoint::Start;
  // Host time of the boundary since the step's start_us; none for a peak (its moment is unknown).
  std::optional<int64_t> offset_us;
  int64_t allocated_bytes = 0;  // a peak: the most allocated at once in the phase
  int64_t reserved_bytes = 0;   // a peak: the most reserved at once in the phase
  bool operator==(const MemoryTimelinePoint& o) const {
    return phase == o.phase && point == o.point && offset_us == o.offset_us && allocated_bytes == o.allocated_bytes &&
           reserved_bytes == o.reserved_bytes;
  }
};
// The phases a memory timeline reads: forward, backward and optimizer.
bool is_memory_timeline_phase(Phase phase);
// Most points a step's memory timeline may hold (a worker sends 9: three per phase).
inline constexpr size_t kMaxMemoryTimelinePoints = 64;

struct Step {
  int64_t step = 0;           // 0-based; steps < warmup are warm-up
  bool warmup = false;
  int64_t start_us = 0;       // host clock
  int64_t end_us = 0;
  double step_ms = 0.0;       // end - start, milliseconds
  int64_t tokens = 0;         // tokens this rank processed in the step (all micro-batches)
  double loss = 0.0;          // mean loss of the step on this rank
  MemoryStats memory;
  double comm_ms = 0.0;           // sum of collective durations
  double exposed_comm_ms = 0.0;   // collective time not overlapped by the compute lane
  double busbw_gbps = 0.0;        // bytes-weighted mean bus bandwidth of the step's collectives
  bool skipped = false;           // fp16: optimizer step skipped because of inf/nan gradients
  // Kernel-sampled step: the device's own kernel, memcpy and memset intervals were recorded
  // (Kineto/CUPTI in the worker; every step of an imported trace). Its compute lane then holds
  // only the time compute kernels ran, and the GPU-idle gaps (HostWait, LaunchGap, SyncWait,
  // DependencyWait).
  bool gpu_sampled = false;
  double gpu_busy_ms = 0.0;       // union of kernel/memcpy/memset intervals in the step (sampled steps only)
  // Memory-sampled step (the kernel-sampled steps of a CUDA worker): the allocator's live bytes by
  // category at the larger of the forward's and the backward's end.
  bool memory_sampled = false;
  MemoryCategories memory_categories;
  // Memory-sampled steps of a CUDA worker: the allocator's allocated and reserved bytes through
  // the last micro-step's forward and backward and the optimizer, in order (start, peak and end of
  // each phase). Empty where it was not read.
  std::vector<MemoryTimelinePoint> memory_timeline;
  std::vector<Interval> intervals;
  // tunebench_probe's kernel-sampled steps: the torch.profiler trace of the step's window, which
  // the runner reads and folds in (core/launch/kernel_traces.h) before the step is stored.
  std::string kernel_trace;
};

// NVML counters beyond the basic sample (stored beside it: store schema 7). Absent where the GPU,
// the driver or the permissions do not give them.
struct GpuCounters {
  // nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver was loaded; it advances about
  // every 100 ms (metrics/energy.h turns two readings into joules over a window).
  std::optional<int64_t> energy_mj;
  // NVML GPM (Hopper and newer), over the time since the previous sample: the share of time SMs
  // were busy, the warps resident against the maximum, and any tensor pipe's activity.
  std::optional<double> sm_activity_pct;
  std::optional<double> sm_occupancy_pct;
  std::optional<double> tensor_activity_pct;
  bool any() const { return energy_mj || sm_activity_pct || sm_occupancy_pct || tensor_activity_pct; }
};

// One telemetry sample. GPU fields come from NVML, CPU fields from /proc; absent ones are nullopt.
struct GpuSample {
  int index = -1;  // device index, -1 for a CPU sample
  std::optional<double> util_pct;
  std::optional<int64_t> mem_used_bytes;
  std::optional<int64_t> mem_total_bytes;
  std::optional<double> power_w;
  std::optional<double> sm_clock_mhz;
  std::optional<double> temperature_c;
  std::optional<double> pcie_tx_mbps;    // MB/s
  std::optional<double> pcie_rx_mbps;
  std::optional<double> nvlink_tx_mbps;
  std::optional<double> nvlink_rx_mbps;
  std::optional<double> cpu_pct;         // process CPU use, 100 = one core
  std::optional<int64_t> rss_bytes;
  GpuCounters counters;                  // energy and GPM activity (top-level fields on the wire)
};

struct Log {
  std::string level;  // "debug" | "info"
  std::string message;
};

struct Warning {
  std::string kind;  // short machine-readable tag, e.g. "schema", "cuda-graph", "data"
  std::string message;
};

// Kinds: "oom", "nccl", "comm" (Gloo), "timeout", "config", "crash", "unsupported", "io", "rendezvous",
// "internal".
struct Error {
  std::string kind;
  std::string message;
  nlohmann::json details = nlohmann::json::object();  // e.g. requested_bytes, memory stats
};

struct Summary {
  int64_t measured_steps = 0;
  double step_ms_median = 0.0;
  double step_ms_p25 = 0.0;
  double step_ms_p75 = 0.0;
  double tokens_per_s = 0.0;       // this rank
  double mfu = -1.0;               // model FLOPs utilisation 0..1, -1 when the peak is unknown
  int64_t peak_bytes = 0;
  double comm_ms_median = 0.0;
  double exposed_comm_ms_median = 0.0;
  double data_wait_ms_median = 0.0;
  double final_loss = 0.0;
};

struct Done {
  int exit_code = 0;
  Summary summary;
};

// One point of a link probe (`tunebench-worker --probe-link`): a collective of `bytes` timed over
// `iterations` repetitions on the ranks' real transport. Bandwidths by the nccl-tests definition.
struct LinkProbe {
  Phase collective = Phase::AllReduce;
  std::string dtype = "fp32";
  int64_t bytes = 0;       // nccl-tests "size": the buffer all-reduced
  int world_size = 0;
  int iterations = 0;
  double time_us = 0.0;    // median time of one collective
  double algbw_gbps = 0.0; // bytes / time
  double busbw_gbps = 0.0; // algbw x bus factor (all-reduce: 2(n-1)/n)
};

using Payload = std::variant<Hello, ModelInfo, Step, GpuSample, Log, Warning, Error, Done, LinkProbe>;

struct Event {
  Header header;
  Payload payload;

  template <class T> bool is() const { return std::holds_alternative<T>(payload); }
  template <class T> const T& as() const { return std::get<T>(payload); }
  template <class T> T& as() { return std::get<T>(payload); }
  std::string_view type() const;
};

// Type names on the wire: "hello", "model", "step", "gpu", "log", "warning", "error", "done", "probe".
std::string_view type_name(const Payload& payload);
// Whether `type` is one of those names.
bool is_event_type(std::string_view type);

// JSON conversion, both walking event_fields.h. from_json fills what it finds; missing optional
// fields keep their defaults. Throws nlohmann::json::exception or std::invalid_argument on wrong
// types, missing required fields and numbers outside a field's range; the reader catches.
nlohmann::json to_json(const Event& event);
Event event_from_json(const nlohmann::json& j);

// A MemoryCategories as the object of a step's "memory_categories" group (also an out-of-memory
// error's details.memory_categories), and back; the reader throws as event_from_json does.
nlohmann::json memory_categories_to_json(const MemoryCategories& categories);
MemoryCategories memory_categories_from_json(const nlohmann::json& object);

// A step's memory timeline as the array of its "memory_timeline" field (the exports write it so).
nlohmann::json memory_timeline_to_json(const std::vector<MemoryTimelinePoint>& points);

// Microseconds since the Unix epoch on this host.
int64_t now_us();
// The same clock in nanoseconds (for readings that bracket a few microseconds).
int64_t now_ns();

}  // namespace tunebench::protocol
