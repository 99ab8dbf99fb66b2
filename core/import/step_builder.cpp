#include "core/import/step_builder.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include "core/metrics/bus_bandwidth.h"
#include "core/analysis/phase_breakdown.h"
#include "core/import/span_index.h"
#include "core/import/trace_error.h"

namespace tunebench::import {
namespace {

using protocol::Interval;
using protocol::Lane;
using protocol::Phase;

// A compute activity starting at most this long after a collective ended was waiting for it.
constexpr int64_t kStreamWaitUs = 10;

// Nanoseconds on the trace clock -> microseconds on the host clock (rounded to nearest).
int64_t to_us(int64_t base_us, int64_t ns) { return base_us + (ns >= 0 ? (ns + 500) / 1000 : -((500 - ns) / 1000)); }

// Which phase wins where two intervals of one lane overlap: the breakdown's priorities
// (phase_breakdown.h), recompute above backward because it is carved out of it.
int priority(Phase p) {
  switch (p) {
    case Phase::Recompute:
      return 6;
    case Phase::Backward:
      return 5;
    case Phase::Forward:
      return 4;
    case Phase::Optimizer:
      return 3;
    case Phase::DataWait:
      return 2;
    case Phase::HostToDevice:
      return 1;
    default:
      return 0;
  }
}

// Splits the overlapping intervals of one lane so that each instant belongs to the
// highest-priority interval covering it (the later one on a tie); pieces of one interval that
// touch are joined again. O(n log n).
std::vector<Interval> flatten(std::vector<Interval> in) {
  std::vector<Interval> out;
  in.erase(std::remove_if(in.begin(), in.end(), [](const Interval& i) { return i.end_us <= i.start_us; }), in.end());
  if (in.empty()) return out;
  std::sort(in.begin(), in.end(), [](const Interval& a, const Interval& b) { return a.start_us < b.start_us; });
  std::vector<int64_t> cuts;
  cuts.reserve(in.size() * 2);
  for (const auto& i : in) {
    cuts.push_back(i.start_us);
    cuts.push_back(i.end_us);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  using Entry = std::pair<std::pair<int, size_t>, int64_t>;  // ((priority, index), end)
  std::priority_queue<Entry> active;
  size_t next = 0;
  size_t last_source = SIZE_MAX;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    const int64_t a = cuts[k], b = cuts[k + 1];
    while (next < in.size() && in[next].start_us <= a) {
      active.push({{priority(in[next].phase), next}, in[next].end_us});
      ++next;
    }
    while (!active.empty() && active.top().second <= a) active.pop();
    if (active.empty()) continue;
    const size_t src = active.top().first.second;
    if (src == last_source && !out.empty() && out.back().end_us == a) {
      out.back().end_us = b;
    } else {
      Interval piece = in[src];
      piece.start_us = a;
      piece.end_us = b;
      out.push_back(std::move(piece));
      last_source = src;
    }
  }
  return out;
}

// The parts of `in` inside [start, end].
void clip_into(std::vector<Interval>& in, int64_t start, int64_t end, std::vector<Interval>& out) {
  for (auto& i : in) {
    i.start_us = std::max(i.start_us, start);
    i.end_us = std::min(i.end_us, end);
    if (i.end_us > i.start_us) out.push_back(std::move(i));
  }
}

struct Placed {
  int64_t start_ns, end_ns;
  Lane lane;
  Phase phase;
  size_t activity;  // index into TraceRecords::activities
};

std::string version_text(int64_t v) {  // 13000 -> "13.0", 12040 -> "12.4"
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string fsdp_dtype(const std::string& torch_dtype) {
  if (torch_dtype == "Float") return "fp32";
  if (torch_dtype == "BFloat16") return "bf16";
  if (torch_dtype == "Half") return "fp16";
  return "";
}

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  return buf;
}

}  // namespace

void StepBuilder::check_content() const {
  const TraceRecords& r = m_records;
  if (r.cpu_events == 0 && r.gpu_events == 0)
    throw TraceError(
        "it holds no PyTorch profiler events (no cpu_op, user_annotation or kernel in traceEvents), so it is "
        "not a torch.profiler trace of a training run.");
  if (r.gpu_events == 0)
    throw TraceError(
        "it is a trace of a CPU-only run: it holds no GPU kernels. Tunebench imports traces of GPU runs "
        "(torch.profiler with ProfilerActivity.CUDA).");
  if (r.launches.empty() || r.cpu_events == 0)
    throw TraceError(
        "it holds GPU activity but no CPU side (no CUDA launches or CPU ops), so no GPU work can be tied to a "
        "step. Profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA].");
}

void StepBuilder::build(RankTrace& out) {
  check_content();
  TraceRecords& r = m_records;
  const int64_t base_us = m_header.base_time_ns ? *m_header.base_time_ns / 1000 : 0;
  const int world = static_cast<int>(std::clamp<int64_t>(m_header.world_size.value_or(1), 1, 1 << 20));

  // ---- steps ----------------------------------------------------------------------------------
  auto& markers = r.steps;
  std::sort(markers.begin(), markers.end(),
            [](const StepMarker& a, const StepMarker& b) { return a.start_ns < b.start_ns; });
  if (markers.empty()) {
    markers.push_back({0, r.first_ns, r.last_ns});
    out.warnings.push_back(
        "The trace has no ProfilerStep#N markers (no schedule, or prof.step() never called): "
        "its whole window, " +
        ms_text(static_cast<double>(r.last_ns - r.first_ns) / 1e6) + ", is imported as one step.");
  }
  bool increasing = true;
  for (size_t i = 1; i < markers.size(); ++i) increasing = increasing && markers[i].number > markers[i - 1].number;
  if (!increasing) {
    for (size_t i = 0; i < markers.size(); ++i) markers[i].number = static_cast<int64_t>(i);
    out.warnings.push_back("ProfilerStep numbers are not increasing in time; the steps are numbered 0.." +
                           std::to_string(markers.size() - 1) + " in time order instead.");
  }
  const size_t n_steps = markers.size();
  auto step_of = [&](int64_t t_ns) -> int64_t {
    const auto it = std::upper_bound(markers.begin(), markers.end(), t_ns,
                                     [](int64_t t, const StepMarker& m) { return t < m.start_ns; });
    const int64_t i = static_cast<int64_t>(it - markers.begin()) - 1;
    if (i < 0) return -1;
    if (static_cast<size_t>(i) == n_steps - 1 && t_ns > markers.back().end_ns) return -1;
    return i;  // between two markers: the earlier step
  };

  // ---- CPU context ----------------------------------------------------------------------------
  const SpanIndex backward(r.backward), optimizer(r.optimizer), annotations(r.annotations);
  std::vector<CpuSpan> recomputed;
  for (const CpuSpan& s : r.forward_ops)
    if (backward.covers(s.tid, s.start_ns)) recomputed.push_back(s);
  const SpanIndex recompute(recomputed);
  std::vector<int64_t> first_backward(n_steps, INT64_MAX);
  for (const CpuSpan& s : r.backward)
    if (const int64_t i = step_of(s.start_ns); i >= 0)
      first_backward[static_cast<size_t>(i)] = std::min(first_backward[static_cast<size_t>(i)], s.start_ns);

  // ---- GPU activities -> steps and phases -------------------------------------------------------
  auto& launches = r.launches;
  std::sort(launches.begin(), launches.end(),
            [](const Launch& a, const Launch& b) { return a.correlation < b.correlation; });
  std::vector<std::vector<Placed>> placed(n_steps);
  std::vector<int64_t> gpu_end(n_steps, INT64_MIN);
  std::map<int, int64_t> devices;  // device index -> activities
  int64_t unlaunched = 0, outside = 0, unlaunched_ns = 0;
  bool recompute_seen = false;
  for (size_t ai = 0; ai < r.activities.size(); ++ai) {
    GpuActivity& a = r.activities[ai];
    const auto it = std::lower_bound(launches.begin(), launches.end(), a.correlation,
                                     [](const Launch& l, int64_t c) { return l.correlation < c; });
    if (it == launches.end() || it->correlation != a.correlation) {
      ++unlaunched;
      unlaunched_ns += a.end_ns - a.start_ns;
      continue;
    }
    const int64_t si = step_of(it->ts_ns);
    if (si < 0) {
      ++outside;
      continue;
    }
    ++devices[a.device];
    const size_t s = static_cast<size_t>(si);
    Placed p{a.start_ns, a.end_ns, Lane::Compute, Phase::Other, ai};
    const bool in_backward = backward.covers(it->tid, it->ts_ns);
    const bool in_optimizer = optimizer.covers(it->tid, it->ts_ns);
    if (a.kind == ActivityKind::Collective) {
      if (!a.comm.known && a.external_id >= 0)
        if (const auto pc = r.param_comms.find(a.external_id); pc != r.param_comms.end()) a.comm = pc->second;
      p.lane = Lane::Comm;
      p.phase = a.comm.phase;
      // The label: the innermost annotation around the launch ("FSDP::all_gather (blocks.0)"),
      // else the collective's own name ("allreduce").
      const int32_t label = annotations.innermost_label(it->tid, it->ts_ns);
      a.comm.name = label >= 0 ? label : a.comm.name;
    } else if (a.kind == ActivityKind::HostToDevice && !in_backward && !in_optimizer) {
      p.lane = Lane::Host;
      p.phase = Phase::HostToDevice;
    } else if (recompute.covers(it->tid, it->ts_ns)) {
      p.phase = Phase::Recompute;
      recompute_seen = true;
    } else if (in_backward) {
      p.phase = Phase::Backward;
    } else if (in_optimizer) {
      p.phase = Phase::Optimizer;
    } else if (it->ts_ns < first_backward[s]) {
      p.phase = Phase::Forward;
    }
    placed[s].push_back(p);
    gpu_end[s] = std::max(gpu_end[s], a.end_ns);
  }

  // ---- step windows and lanes -------------------------------------------------------------------
  std::vector<std::vector<CpuSpan>> waits(n_steps);
  for (const CpuSpan& w : r.data_waits)
    if (const int64_t i = step_of(w.start_ns); i >= 0) waits[static_cast<size_t>(i)].push_back(w);
  int64_t prev_end_us = INT64_MIN;
  int64_t gpu_past_cpu = 0;
  for (size_t s = 0; s < n_steps; ++s) {
    protocol::Step step;
    step.step = markers[s].number;
    step.start_us = std::max(to_us(base_us, markers[s].start_ns), prev_end_us);
    int64_t end_ns = markers[s].end_ns;
    if (gpu_end[s] > end_ns) {
      end_ns = gpu_end[s];
      ++gpu_past_cpu;
    }
    step.end_us = std::max(to_us(base_us, end_ns), step.start_us);
    prev_end_us = step.end_us;

    auto& acts = placed[s];
    std::sort(acts.begin(), acts.end(), [](const Placed& a, const Placed& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
    });
    std::vector<Interval> compute, host, comm;
    std::vector<int64_t> comm_ends;  // of this step's collectives, sorted
    for (const Placed& p : acts) {
      const int64_t start = to_us(base_us, p.start_ns), end = to_us(base_us, p.end_ns);
      if (p.lane == Lane::Host) {
        host.push_back({Lane::Host, Phase::HostToDevice, start, end, "", 0, 0.0});
      } else if (p.lane == Lane::Comm) {
        const GpuActivity& a = r.activities[p.activity];
        Interval in{
            Lane::Comm,   p.phase, start, end, a.comm.name >= 0 ? r.labels[static_cast<size_t>(a.comm.name)] : "",
            a.comm.bytes, 0.0};
        const int group = a.comm.group_size > 0 ? a.comm.group_size : world;
        in.busbw_gbps = metrics::bus_bandwidth_gbps(in.phase, in.bytes, in.duration_us(), group);
        comm.push_back(std::move(in));
        comm_ends.push_back(end);
      }
    }
    std::sort(comm_ends.begin(), comm_ends.end());
    // The compute stream waited for a collective in the gap [from, to) when one ended inside it and
    // the next activity started right after: an event wait releases the stream at once, while a
    // kernel the host launched late starts tens of µs after anything else.
    auto waited_for_comm = [&](int64_t from, int64_t to) {
      const auto it = std::upper_bound(comm_ends.begin(), comm_ends.end(), to);
      return it != comm_ends.begin() && *std::prev(it) >= from && to - *std::prev(it) <= kStreamWaitUs;
    };
    for (const Placed& p : acts) {
      if (p.lane != Lane::Compute) continue;
      const int64_t start = to_us(base_us, p.start_ns), end = to_us(base_us, p.end_ns);
      // A run of one phase is one interval, as a CUDA-event bracket around it would measure, launch
      // gaps included; a gap in which the stream waited for a collective splits it, so that the
      // wait shows as exposed communication.
      Interval* run = compute.empty() || compute.back().phase != p.phase ? nullptr : &compute.back();
      if (run && (start <= run->end_us || !waited_for_comm(run->end_us, start)))
        run->end_us = std::max(run->end_us, end);
      else
        compute.push_back({Lane::Compute, p.phase, start, end, "", 0, 0.0});
    }
    for (const CpuSpan& w : waits[s])
      host.push_back({Lane::Host, Phase::DataWait, to_us(base_us, w.start_ns), to_us(base_us, w.end_ns), "", 0, 0.0});
    compute = flatten(std::move(compute));
    host = flatten(std::move(host));
    clip_into(compute, step.start_us, step.end_us, step.intervals);
    clip_into(host, step.start_us, step.end_us, step.intervals);
    // Collectives stay as they ran, each with its own duration and bandwidth: two NCCL streams
    // (FSDP's all-gather and reduce-scatter) may overlap, and the analysis takes unions.
    clip_into(comm, step.start_us, step.end_us, step.intervals);
    std::sort(step.intervals.begin(), step.intervals.end(),
              [](const Interval& a, const Interval& b) { return a.start_us < b.start_us; });

    step.step_ms = static_cast<double>(step.end_us - step.start_us) / 1000.0;
    double bytes = 0, weighted = 0;
    for (const auto& in : step.intervals) {
      if (in.lane != Lane::Comm) continue;
      step.comm_ms += static_cast<double>(in.duration_us()) / 1000.0;
      bytes += static_cast<double>(in.bytes);
      weighted += static_cast<double>(in.bytes) * in.busbw_gbps;
    }
    if (bytes > 0) step.busbw_gbps = weighted / bytes;
    step.exposed_comm_ms = static_cast<double>(analysis::breakdown_of(step).exposed_comm_us()) / 1000.0;
    out.steps.push_back(std::move(step));
  }
  out.first_step_number = markers.front().number;
  out.last_step_number = markers.back().number;

  // ---- caveats ------------------------------------------------------------------------------------
  if (unlaunched > 0)
    out.warnings.push_back(std::to_string(unlaunched) + " GPU activities (" +
                           ms_text(static_cast<double>(unlaunched_ns) / 1e6) +
                           " of GPU time) have no CUDA launch in the trace and were left out.");
  if (outside > 0)
    out.warnings.push_back(std::to_string(outside) +
                           " GPU activities were launched before the first or after the last profiled step and were "
                           "left out.");
  if (gpu_past_cpu > 0)
    out.warnings.push_back("In " + std::to_string(gpu_past_cpu) + " of " + std::to_string(n_steps) +
                           " steps the GPU was still working when the CPU left the step; those steps end when the "
                           "GPU finished their work.");
  for (const std::string& dt : r.unknown_dtypes)
    out.warnings.push_back("Collectives in dtype '" + dt + "' have an unknown element size: their bytes are 0.");

  int device_index = -1;
  int64_t most = 0;
  for (const auto& [d, n] : devices)
    if (n > most) most = n, device_index = d;
  fill_hello(out, device_index);
  fill_known(out, recompute_seen);
  out.gpu_activities = static_cast<int64_t>(r.activities.size());
  out.events = r.events;
}

void StepBuilder::fill_hello(RankTrace& out, int device_index) const {
  protocol::Hello& h = out.hello;
  const int64_t world = m_header.world_size.value_or(1);
  h.world_size = static_cast<int>(std::clamp<int64_t>(world, 1, 1 << 20));
  out.rank = static_cast<int>(std::clamp<int64_t>(m_header.rank.value_or(0), 0, 1 << 20));
  h.pid = m_records.pid;
  h.local_rank = device_index >= 0 ? device_index : out.rank;
  h.device_kind = "cuda";
  h.device = "CUDA device " + std::to_string(h.local_rank);
  for (const auto& d : m_header.devices)
    if (d.id == device_index) {
      if (!d.name.empty()) h.device = d.name;
      h.device_memory_bytes = d.total_memory_bytes;
    }
  h.cuda = version_text(m_header.cuda_runtime_version);
  h.nccl = m_header.nccl_version;
  h.backend = m_header.backend.empty() ? (world > 1 ? "" : "none") : m_header.backend;
}

void StepBuilder::fill_known(RankTrace& out, bool recompute_seen) const {
  const TraceRecords& r = m_records;
  nlohmann::json& k = out.known;
  k["world_size"] = out.hello.world_size;
  k["device"] = "cuda";
  if (r.ddp)
    k["strategy"] = "ddp";
  else if (r.fsdp)
    k["strategy"] = "fsdp";
  else if (out.hello.world_size == 1)
    k["strategy"] = "single";
  if (r.single_process_loader && !r.multi_process_loader) k["num_workers"] = 0;
  if (r.optimizer_class == "AdamW") k["optimizer"] = "adamw";
  if (r.optimizer_class == "SGD") k["optimizer"] = "sgd";
  if (recompute_seen) k["checkpointing"] = true;
  if (r.fsdp) {
    // FSDP all-gathers parameters in its param dtype and reduce-scatters in its reduce dtype.
    std::map<Phase, std::set<std::string>> dtypes;
    for (const auto& a : r.activities)
      if (a.kind == ActivityKind::Collective && a.comm.dtype >= 0)
        dtypes[a.comm.phase].insert(r.dtypes[static_cast<size_t>(a.comm.dtype)]);
    for (const auto& [phase, key] :
         {std::pair{Phase::AllGather, "fsdp_param_dtype"}, std::pair{Phase::ReduceScatter, "fsdp_reduce_dtype"}}) {
      const auto& set = dtypes[phase];
      if (set.size() == 1 && !fsdp_dtype(*set.begin()).empty()) k[key] = fsdp_dtype(*set.begin());
    }
  }
  k["steps"] = static_cast<int64_t>(out.steps.size());
  k["warmup"] = 0;
}

}  // namespace tunebench::import
