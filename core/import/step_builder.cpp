#include "core/import/step_builder.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include "core/metrics/bus_bandwidth.h"
#include "core/metrics/exposed_comm.h"
#include "core/metrics/gpu_activity.h"
#include "core/import/span_index.h"
#include "core/import/trace_collector.h"
#include "core/import/trace_error.h"

namespace tunebench::import {
namespace {

using protocol::Interval;
using protocol::Lane;
using protocol::Phase;

// Nanoseconds on the trace clock -> microseconds on the host clock (rounded to nearest).
int64_t to_us(int64_t base_us, int64_t ns) { return base_us + (ns >= 0 ? (ns + 500) / 1000 : -((500 - ns) / 1000)); }

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
  int64_t launch_ns;
  int64_t launch_end_ns;
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
  // Another accelerator's trace has no CUDA launches: say what it is, not "CPU-only" or "no CPU side".
  if (!r.other_accelerator.empty() && r.launches.empty())
    throw TraceError("it is a trace of a run on an accelerator other than a CUDA GPU (" + r.other_accelerator +
                     "): Tunebench imports torch.profiler traces of NVIDIA GPU runs "
                     "(CUDA kernels and their launches), and cannot map another accelerator's activity.");
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
    Placed p{a.start_ns, a.end_ns, Lane::Compute, Phase::Other, ai, it->ts_ns, it->end_ns};
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

  // ---- step windows -----------------------------------------------------------------------------
  // A step runs from its marker's start (never before the previous step's end) to the later of the
  // marker's end and the end of the GPU work launched in it.
  std::vector<std::pair<int64_t, int64_t>> window_ns(n_steps);  // [start, end] on the trace clock
  int64_t gpu_past_cpu = 0;
  for (size_t s = 0; s < n_steps; ++s) {
    const int64_t prev_end = s > 0 ? window_ns[s - 1].second : INT64_MIN;
    int64_t end_ns = markers[s].end_ns;
    if (gpu_end[s] > end_ns) {
      end_ns = gpu_end[s];
      ++gpu_past_cpu;
    }
    const int64_t start_ns = std::max(markers[s].start_ns, prev_end);
    window_ns[s] = {start_ns, std::max(end_ns, start_ns)};
  }
  // The steps a CPU span overlaps: what the host ran (or waited in) during the GPU-idle gaps.
  auto for_each_step_overlapping = [&](const CpuSpan& c, auto&& fn) {
    auto it = std::upper_bound(window_ns.begin(), window_ns.end(), c.start_ns,
                               [](int64_t t, const std::pair<int64_t, int64_t>& w) { return t < w.first; });
    size_t i = it == window_ns.begin() ? 0 : static_cast<size_t>(it - window_ns.begin()) - 1;
    for (; i < n_steps && window_ns[i].first <= c.end_ns; ++i)
      if (window_ns[i].second >= c.start_ns) fn(i);
  };
  std::vector<std::vector<metrics::HostCall>> step_ops(n_steps), step_syncs(n_steps);
  for (const CpuSpan& op : r.ops)
    for_each_step_overlapping(op, [&](size_t i) {
      step_ops[i].push_back({to_us(base_us, op.start_ns), to_us(base_us, op.end_ns), op.tid,
                             r.labels[static_cast<size_t>(op.label)]});
    });
  const SpanIndex op_index(r.ops);
  for (const CpuSpan& sync : r.syncs)
    for_each_step_overlapping(sync, [&](size_t i) {
      // Named after the innermost op of its thread around it (aten::_local_scalar_dense of .item()).
      const int32_t op = op_index.innermost_label(sync.tid, sync.start_ns);
      std::string name = op >= 0 ? metrics::describe_sync_op(r.labels[static_cast<size_t>(op)])
                                 : r.labels[static_cast<size_t>(sync.label)] + " (outside any op)";
      step_syncs[i].push_back({to_us(base_us, sync.start_ns), to_us(base_us, sync.end_ns), sync.tid, std::move(name)});
    });

  // Gloo runs its collectives on the host: with no collective kernel in the trace, its
  // "gloo:all_reduce" spans (from the rank's arrival to the collective's end) are the comm lane.
  std::vector<std::vector<Interval>> host_comm(n_steps);
  const bool device_collectives = std::any_of(r.activities.begin(), r.activities.end(),
                                              [](const GpuActivity& a) { return a.kind == ActivityKind::Collective; });
  if (!device_collectives) {
    for (const CpuSpan& c : r.gloo_collectives)
      if (const int64_t i = step_of(c.start_ns); i >= 0) {
        const std::string& name = r.labels[static_cast<size_t>(c.label)];
        host_comm[static_cast<size_t>(i)].push_back({Lane::Comm, TraceCollector::collective_phase(name),
                                                     to_us(base_us, c.start_ns), to_us(base_us, c.end_ns), name, 0,
                                                     0.0});
      }
    if (!r.gloo_collectives.empty())
      out.warnings.push_back(std::to_string(r.gloo_collectives.size()) +
                             " collectives ran through Gloo on the host (no collective kernels): the comm lane holds "
                             "their gloo: spans, without bytes.");
  }

  // Cross-stream dependencies: each cudaStreamWaitEvent with what the CUDA sync records say of it
  // (the streams, the cudaEventRecord it waited for), named after the op around the call.
  std::vector<std::vector<metrics::StreamWait>> step_waits(n_steps);
  for (const StreamWaitCall& call : r.stream_waits)
    for_each_step_overlapping({call.ts_ns, call.ts_ns, call.tid, -1}, [&](size_t i) {
      metrics::StreamWait w;
      w.call_us = to_us(base_us, call.ts_ns);
      if (const auto sync = r.wait_syncs.find(call.correlation); sync != r.wait_syncs.end()) {
        w.stream = sync->second.stream;
        w.on_stream = sync->second.on_stream;
        if (const auto rec = r.event_records.find(sync->second.record_correlation); rec != r.event_records.end())
          w.record_us = to_us(base_us, rec->second);
      }
      const int32_t op = op_index.innermost_label(call.tid, call.ts_ns);
      if (op >= 0) w.op = r.labels[static_cast<size_t>(op)];
      step_waits[i].push_back(std::move(w));
    });

  // ---- lanes ----------------------------------------------------------------------------------------
  std::vector<std::vector<CpuSpan>> waits(n_steps);
  for (const CpuSpan& w : r.data_waits)
    if (const int64_t i = step_of(w.start_ns); i >= 0) waits[static_cast<size_t>(i)].push_back(w);
  for (size_t s = 0; s < n_steps; ++s) {
    protocol::Step step;
    step.step = markers[s].number;
    step.start_us = to_us(base_us, window_ns[s].first);
    if (!out.steps.empty()) step.start_us = std::max(step.start_us, out.steps.back().end_us);
    step.end_us = std::max(to_us(base_us, window_ns[s].second), step.start_us);

    // Every kernel, copy and memset of the step, on the host clock, with its launch: GPU busy, the
    // compute lane (the time compute kernels ran, by phase) and the classified GPU-idle gaps come
    // from metrics::summarise_gpu_activity, as for the worker's kernel-sampled steps.
    metrics::StepActivity activity;
    activity.start_us = step.start_us;
    activity.end_us = step.end_us;
    activity.host_ops = std::move(step_ops[s]);
    activity.syncs = std::move(step_syncs[s]);
    activity.stream_waits = std::move(step_waits[s]);
    std::vector<Interval> host, comm;
    for (const Placed& p : placed[s]) {
      const int64_t start = to_us(base_us, p.start_ns), end = to_us(base_us, p.end_ns);
      activity.activities.push_back(
          {start, end, p.lane, p.phase, to_us(base_us, p.launch_ns), r.activities[p.activity].stream,
           to_us(base_us, std::max(p.launch_end_ns, p.launch_ns))});
      if (p.lane != Lane::Comm) continue;
      const GpuActivity& a = r.activities[p.activity];
      Interval in{Lane::Comm,   p.phase, start, end, a.comm.name >= 0 ? r.labels[static_cast<size_t>(a.comm.name)] : "",
                  a.comm.bytes, 0.0};
      const int group = a.comm.group_size > 0 ? a.comm.group_size : world;
      in.busbw_gbps = metrics::bus_bandwidth_gbps(in.phase, in.bytes, in.duration_us(), group);
      comm.push_back(std::move(in));
    }
    for (auto& in : host_comm[s]) comm.push_back(std::move(in));
    metrics::GpuActivitySummary summary = metrics::summarise_gpu_activity(std::move(activity));
    for (auto& in : summary.intervals) {
      if (in.lane == Lane::Host)
        host.push_back(std::move(in));
      else
        step.intervals.push_back(std::move(in));
    }
    for (const CpuSpan& w : waits[s])
      host.push_back({Lane::Host, Phase::DataWait, to_us(base_us, w.start_ns), to_us(base_us, w.end_ns), "", 0, 0.0});
    host = metrics::flatten_lane(std::move(host));
    clip_into(host, step.start_us, step.end_us, step.intervals);
    // Collectives stay as they ran, each with its own duration and bandwidth: two NCCL streams
    // (FSDP's all-gather and reduce-scatter) may overlap, and the analysis takes unions.
    clip_into(comm, step.start_us, step.end_us, step.intervals);
    std::sort(step.intervals.begin(), step.intervals.end(),
              [](const Interval& a, const Interval& b) { return a.start_us < b.start_us; });

    step.step_ms = static_cast<double>(step.end_us - step.start_us) / 1000.0;
    step.gpu_sampled = true;
    step.gpu_busy_ms = static_cast<double>(summary.busy_us) / 1000.0;
    double bytes = 0, weighted = 0;
    for (const auto& in : step.intervals) {
      if (in.lane != Lane::Comm) continue;
      step.comm_ms += static_cast<double>(in.duration_us()) / 1000.0;
      bytes += static_cast<double>(in.bytes);
      weighted += static_cast<double>(in.bytes) * in.busbw_gbps;
    }
    if (bytes > 0) step.busbw_gbps = weighted / bytes;
    step.exposed_comm_ms = static_cast<double>(metrics::exposed_comm_us(step.intervals)) / 1000.0;
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
