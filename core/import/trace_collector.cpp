#include "core/import/trace_collector.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>

#include "core/metrics/gpu_activity.h"

namespace tunebench::import {
namespace {

using protocol::Phase;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Nanoseconds from a Chrome-trace microsecond value; false when it is absurd (fuzzed input).
bool to_ns(double us, int64_t& out) {
  if (!std::isfinite(us) || std::abs(us) > 4.0e15) return false;  // 4e18 ns: sums stay in int64
  out = static_cast<int64_t>(std::llround(us * 1000.0));
  return true;
}

}  // namespace

int TraceCollector::element_bytes(const std::string& dtype) {
  static const std::pair<const char*, int> sizes[] = {{"Float", 4},
                                                      {"Double", 8},
                                                      {"Half", 2},
                                                      {"BFloat16", 2},
                                                      {"Int", 4},
                                                      {"Long", 8},
                                                      {"Short", 2},
                                                      {"Char", 1},
                                                      {"Byte", 1},
                                                      {"Bool", 1},
                                                      {"ComplexHalf", 4},
                                                      {"ComplexFloat", 8},
                                                      {"ComplexDouble", 16},
                                                      {"Float8_e4m3fn", 1},
                                                      {"Float8_e5m2", 1},
                                                      {"Float8_e4m3fnuz", 1},
                                                      {"Float8_e5m2fnuz", 1},
                                                      {"UInt16", 2},
                                                      {"UInt32", 4},
                                                      {"UInt64", 8}};
  for (const auto& [name, bytes] : sizes)
    if (dtype == name) return bytes;
  return 0;
}

Phase TraceCollector::collective_phase(const std::string& name) {
  const std::string n = lower(name);
  auto has = [&](const char* a) { return n.find(a) != std::string::npos; };
  if (has("allreduce") || has("all_reduce")) return Phase::AllReduce;
  if (has("allgather") || has("all_gather")) return Phase::AllGather;
  if (has("reducescatter") || has("reduce_scatter")) return Phase::ReduceScatter;
  if (has("broadcast")) return Phase::Broadcast;
  return Phase::Other;
}

int32_t TraceCollector::intern_label(const std::string& name) {
  const auto it = m_label_ids.find(name);
  if (it != m_label_ids.end()) return it->second;
  const auto id = static_cast<int32_t>(m_records.labels.size());
  m_records.labels.push_back(name);
  m_label_ids.emplace(name, id);
  return id;
}

CommArgs TraceCollector::comm_args(const TraceEvent& e) {
  CommArgs c;
  if (e.collective.empty()) return c;
  c.known = true;
  c.phase = collective_phase(e.collective);
  c.name = intern_label(e.collective);
  c.group_size = static_cast<int32_t>(std::clamp<int64_t>(e.group_size.value_or(0), 0, 1 << 20));
  const int elem = element_bytes(e.dtype);
  if (!e.dtype.empty()) {
    auto& dt = m_records.dtypes;
    auto it = std::find(dt.begin(), dt.end(), e.dtype);
    if (it == dt.end() && dt.size() < 64) it = dt.insert(dt.end(), e.dtype);
    if (it != dt.end()) c.dtype = static_cast<int8_t>(it - dt.begin());
  }
  if (elem == 0) {
    if (m_records.unknown_dtypes.size() < 16) m_records.unknown_dtypes.insert(e.dtype.empty() ? "(none)" : e.dtype);
  } else {
    const int64_t n = std::max(e.in_nelems.value_or(0), e.out_nelems.value_or(0));
    if (n > 0 && n < (int64_t{1} << 56) / elem) c.bytes = n * elem;
  }
  return c;
}

std::string TraceCollector::accelerator_of(const std::string& cat) {
  static const std::pair<const char*, const char*> kinds[] = {
      {"mtia", "MTIA"}, {"xpu", "Intel XPU"}, {"hpu", "Intel Gaudi (HPU)"}, {"privateuse1", "PrivateUse1"}};
  const std::string c = lower(cat);
  for (const auto& [prefix, name] : kinds)
    if (starts_with(c, prefix)) return name;
  return "";
}

// PyTorch 1.8-1.10 (torch-tb-profiler's era) named the categories differently.
const std::string& TraceCollector::category(const std::string& cat) {
  static const std::pair<std::string, std::string> legacy[] = {{"Operator", "cpu_op"},
                                                               {"Kernel", "kernel"},
                                                               {"Runtime", "cuda_runtime"},
                                                               {"Memcpy", "gpu_memcpy"},
                                                               {"Memset", "gpu_memset"}};
  for (const auto& [old_name, name] : legacy)
    if (cat == old_name) return name;
  return cat;
}

void TraceCollector::add(const TraceEvent& event) {
  ++m_records.events;
  if (m_records.other_accelerator.empty() && !event.cat.empty()) m_records.other_accelerator = accelerator_of(event.cat);
  if (event.ph != 'X' || !event.ts_us) return;
  const TraceEvent* ep = &event;
  if (const std::string& cat = category(event.cat); &cat != &event.cat) {
    m_legacy = event;
    m_legacy.cat = cat;
    ep = &m_legacy;
  }
  const TraceEvent& e = *ep;
  int64_t start_ns = 0, dur_ns = 0;
  if (!to_ns(*e.ts_us, start_ns) || !to_ns(e.dur_us.value_or(0.0), dur_ns) || dur_ns < 0) return;
  const int64_t end_ns = start_ns + dur_ns;
  if (e.cat == "cpu_op" || e.cat == "user_annotation") {
    add_cpu(e, start_ns, end_ns);
  } else if (e.cat == "kernel" || e.cat == "gpu_memcpy" || e.cat == "gpu_memset") {
    add_gpu(e, start_ns, end_ns);
  } else if (e.cat == "cuda_sync") {
    if (e.correlation && (e.wait_on_stream || e.wait_on_record_correlation))
      m_records.wait_syncs[*e.correlation] = {e.stream.value_or(-1), e.wait_on_stream.value_or(-1),
                                               e.wait_on_record_correlation.value_or(-1)};
  } else if ((e.cat == "cuda_runtime" || e.cat == "cuda_driver") && e.tid) {
    if (metrics::is_sync_call(e.name)) m_records.syncs.push_back({start_ns, end_ns, *e.tid, intern_label(e.name)});
    if (!e.correlation) return;
    if (e.name == "cudaStreamWaitEvent" || e.name == "cuStreamWaitEvent")
      m_records.stream_waits.push_back({*e.correlation, start_ns, *e.tid});
    if (starts_with(e.name, "cudaEventRecord") || starts_with(e.name, "cuEventRecord"))
      m_records.event_records[*e.correlation] = start_ns;
    m_records.launches.push_back({*e.correlation, start_ns, *e.tid, end_ns});
    m_records.first_ns = std::min(m_records.first_ns, start_ns);
    m_records.last_ns = std::max(m_records.last_ns, end_ns);
  }
}

void TraceCollector::add_cpu(const TraceEvent& e, int64_t start_ns, int64_t end_ns) {
  ++m_records.cpu_events;
  m_records.first_ns = std::min(m_records.first_ns, start_ns);
  m_records.last_ns = std::max(m_records.last_ns, end_ns);
  if (!e.tid) return;
  if (m_records.pid == 0 && e.pid) m_records.pid = *e.pid;
  const CpuSpan span{start_ns, end_ns, *e.tid, -1};
  const std::string& n = e.name;
  if (starts_with(n, "ProfilerStep#")) {  // user_annotation; cpu_op in older PyTorch
    const std::string digits = n.substr(13);
    if (!digits.empty() && digits.size() <= 18 && std::all_of(digits.begin(), digits.end(), ::isdigit))
      m_records.steps.push_back({std::stoll(digits), start_ns, end_ns});
  } else if (starts_with(n, "enumerate(DataLoader)#")) {
    m_records.data_waits.push_back(span);
    if (n.find("_SingleProcessDataLoaderIter") != std::string::npos) m_records.single_process_loader = true;
    if (n.find("_MultiProcessingDataLoaderIter") != std::string::npos) m_records.multi_process_loader = true;
  } else if (starts_with(n, "Optimizer.step#") || starts_with(n, "Optimizer.zero_grad#")) {
    m_records.optimizer.push_back(span);
    if (starts_with(n, "Optimizer.step#") && m_records.optimizer_class.empty()) {
      const size_t hash = n.find('#'), dot = n.find('.', hash);
      if (dot != std::string::npos) m_records.optimizer_class = n.substr(hash + 1, dot - hash - 1);
    }
  } else if (starts_with(n, "gloo:")) {
    m_records.gloo_collectives.push_back({start_ns, end_ns, *e.tid, intern_label(n)});
  } else if (starts_with(n, "autograd::engine::evaluate_function: ")) {
    m_records.backward.push_back(span);
  } else if (n == "record_param_comms") {
    if (e.external_id) {
      const CommArgs c = comm_args(e);
      if (c.known) m_records.param_comms[*e.external_id] = c;
    }
  } else if (e.cat == "cpu_op" && e.sequence_number && e.fwd_thread_id.value_or(0) == 0) {
    m_records.forward_ops.push_back(span);
  }
  if (e.cat == "cpu_op" && !starts_with(n, "ProfilerStep#")) m_records.ops.push_back({start_ns, end_ns, *e.tid, intern_label(n)});
  if (e.cat == "user_annotation") {
    if (n == "DistributedDataParallel.forward") m_records.ddp = true;
    if (starts_with(n, "FSDP::") || starts_with(n, "FullyShardedDataParallel")) m_records.fsdp = true;
    const bool structural = starts_with(n, "ProfilerStep#") || starts_with(n, "enumerate(DataLoader)#") ||
                            starts_with(n, "Optimizer.") || starts_with(n, "nccl:");
    if (!structural) m_records.annotations.push_back({start_ns, end_ns, *e.tid, intern_label(n)});
  }
}

void TraceCollector::add_gpu(const TraceEvent& e, int64_t start_ns, int64_t end_ns) {
  ++m_records.gpu_events;
  m_records.first_ns = std::min(m_records.first_ns, start_ns);
  m_records.last_ns = std::max(m_records.last_ns, end_ns);
  if (!e.correlation) return;
  GpuActivity a;
  a.start_ns = start_ns;
  a.end_ns = end_ns;
  a.correlation = *e.correlation;
  a.external_id = e.external_id.value_or(-1);
  a.device = static_cast<int32_t>(std::clamp<int64_t>(e.device.value_or(-1), -1, 1 << 20));
  a.stream = static_cast<int32_t>(std::clamp<int64_t>(e.stream.value_or(-1), -1, INT32_MAX));
  if (e.cat == "kernel") {
    const bool nccl = lower(e.name.substr(0, 4)) == "nccl";
    a.comm = comm_args(e);
    if (nccl || a.comm.known) {
      a.kind = ActivityKind::Collective;
      if (!a.comm.known) a.comm.phase = collective_phase(e.name);  // refined from record_param_comms later
    }
  } else if (e.cat == "gpu_memcpy") {
    a.kind = starts_with(e.name, "Memcpy HtoD") ? ActivityKind::HostToDevice : ActivityKind::Copy;
  } else {
    a.kind = ActivityKind::Copy;
  }
  m_records.activities.push_back(a);
}

}  // namespace tunebench::import
