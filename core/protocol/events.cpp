// JSON mapping of the event structs. Field names here are the wire names of docs/PROTOCOL.md.
#include "core/protocol/events.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <stdexcept>

namespace tunebench::protocol {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 3> kLaneNames = {"host", "compute", "comm"};
constexpr std::array<std::string_view, 11> kPhaseNames = {
    "data_wait", "h2d",        "forward",        "backward",  "recompute", "optimizer",
    "all_reduce", "all_gather", "reduce_scatter", "broadcast", "other"};

// Reads j[key] into out when present and not null; wrong types throw (the reader reports them).
template <class T> void get_if(const json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) out = it->get<T>();
}
template <class T> void get_if(const json& j, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) out = it->get<T>();
}
template <class T> void put_if(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

json interval_to_json(const Interval& in) {
  json j = {{"lane", to_string(in.lane)},
            {"phase", to_string(in.phase)},
            {"start_us", in.start_us},
            {"end_us", in.end_us}};
  if (!in.label.empty()) j["label"] = in.label;
  if (in.bytes) j["bytes"] = in.bytes;
  if (in.busbw_gbps > 0) j["busbw_gbps"] = in.busbw_gbps;
  return j;
}

Interval interval_from_json(const json& j) {
  Interval in;
  const auto phase = phase_from_string(j.at("phase").get<std::string>());
  in.phase = phase.value_or(Phase::Other);
  if (auto it = j.find("lane"); it != j.end()) {
    const auto lane = lane_from_string(it->get<std::string>());
    if (!lane) throw std::invalid_argument("unknown lane '" + it->get<std::string>() + "'");
    in.lane = *lane;
  } else {
    in.lane = default_lane(in.phase);
  }
  in.start_us = j.at("start_us").get<int64_t>();
  in.end_us = j.at("end_us").get<int64_t>();
  get_if(j, "label", in.label);
  get_if(j, "bytes", in.bytes);
  get_if(j, "busbw_gbps", in.busbw_gbps);
  return in;
}

struct ToJson {
  json& j;
  void operator()(const Hello& h) const {
    j["host"] = h.host;
    j["pid"] = h.pid;
    j["world_size"] = h.world_size;
    j["local_rank"] = h.local_rank;
    j["device"] = h.device;
    j["device_kind"] = h.device_kind;
    j["device_memory_bytes"] = h.device_memory_bytes;
    j["driver"] = h.driver;
    j["cuda"] = h.cuda;
    j["cudnn"] = h.cudnn;
    j["nccl"] = h.nccl;
    j["torch"] = h.torch;
    j["backend"] = h.backend;
    j["env"] = h.env;
    if (!h.topology.empty()) j["topology"] = h.topology;
    j["config"] = h.config;
    j["clock_offset_us"] = h.clock_offset_us;
  }
  void operator()(const ModelInfo& m) const {
    j["parameters"] = m.parameters;
    j["matmul_parameters"] = m.matmul_parameters;
    j["flops_per_token"] = m.flops_per_token;
    j["flops_formula"] = m.flops_formula;
    j["predicted_peak_bytes"] = m.predicted_peak_bytes;
    j["parameter_bytes"] = m.parameter_bytes;
  }
  void operator()(const Step& s) const {
    j["step"] = s.step;
    j["warmup"] = s.warmup;
    j["start_us"] = s.start_us;
    j["end_us"] = s.end_us;
    j["step_ms"] = s.step_ms;
    j["tokens"] = s.tokens;
    j["loss"] = s.loss;
    j["memory"] = {{"allocated_bytes", s.memory.allocated_bytes},
                   {"reserved_bytes", s.memory.reserved_bytes},
                   {"peak_bytes", s.memory.peak_bytes},
                   {"alloc_retries", s.memory.alloc_retries}};
    j["comm_ms"] = s.comm_ms;
    j["exposed_comm_ms"] = s.exposed_comm_ms;
    j["busbw_gbps"] = s.busbw_gbps;
    if (s.skipped) j["skipped"] = true;
    json arr = json::array();
    for (const auto& in : s.intervals) arr.push_back(interval_to_json(in));
    j["intervals"] = std::move(arr);
  }
  void operator()(const GpuSample& g) const {
    j["index"] = g.index;
    put_if(j, "util_pct", g.util_pct);
    put_if(j, "mem_used_bytes", g.mem_used_bytes);
    put_if(j, "mem_total_bytes", g.mem_total_bytes);
    put_if(j, "power_w", g.power_w);
    put_if(j, "sm_clock_mhz", g.sm_clock_mhz);
    put_if(j, "temperature_c", g.temperature_c);
    put_if(j, "pcie_tx_mbps", g.pcie_tx_mbps);
    put_if(j, "pcie_rx_mbps", g.pcie_rx_mbps);
    put_if(j, "nvlink_tx_mbps", g.nvlink_tx_mbps);
    put_if(j, "nvlink_rx_mbps", g.nvlink_rx_mbps);
    put_if(j, "cpu_pct", g.cpu_pct);
    put_if(j, "rss_bytes", g.rss_bytes);
  }
  void operator()(const Log& l) const {
    j["level"] = l.level;
    j["message"] = l.message;
  }
  void operator()(const Warning& w) const {
    j["kind"] = w.kind;
    j["message"] = w.message;
  }
  void operator()(const Error& e) const {
    j["kind"] = e.kind;
    j["message"] = e.message;
    j["details"] = e.details;
  }
  void operator()(const Done& d) const {
    const auto& s = d.summary;
    j["exit_code"] = d.exit_code;
    j["summary"] = {{"measured_steps", s.measured_steps},
                    {"step_ms_median", s.step_ms_median},
                    {"step_ms_p25", s.step_ms_p25},
                    {"step_ms_p75", s.step_ms_p75},
                    {"tokens_per_s", s.tokens_per_s},
                    {"mfu", s.mfu},
                    {"peak_bytes", s.peak_bytes},
                    {"comm_ms_median", s.comm_ms_median},
                    {"exposed_comm_ms_median", s.exposed_comm_ms_median},
                    {"data_wait_ms_median", s.data_wait_ms_median},
                    {"final_loss", s.final_loss}};
  }
  void operator()(const LinkProbe& p) const {
    j["collective"] = to_string(p.collective);
    j["dtype"] = p.dtype;
    j["bytes"] = p.bytes;
    j["world_size"] = p.world_size;
    j["iterations"] = p.iterations;
    j["time_us"] = p.time_us;
    j["algbw_gbps"] = p.algbw_gbps;
    j["busbw_gbps"] = p.busbw_gbps;
  }
};

Payload payload_from_json(std::string_view type, const json& j) {
  if (type == "hello") {
    Hello h;
    get_if(j, "host", h.host);
    get_if(j, "pid", h.pid);
    get_if(j, "world_size", h.world_size);
    get_if(j, "local_rank", h.local_rank);
    get_if(j, "device", h.device);
    get_if(j, "device_kind", h.device_kind);
    get_if(j, "device_memory_bytes", h.device_memory_bytes);
    get_if(j, "driver", h.driver);
    get_if(j, "cuda", h.cuda);
    get_if(j, "cudnn", h.cudnn);
    get_if(j, "nccl", h.nccl);
    get_if(j, "torch", h.torch);
    get_if(j, "backend", h.backend);
    get_if(j, "env", h.env);
    get_if(j, "topology", h.topology);
    if (auto it = j.find("config"); it != j.end() && it->is_object()) h.config = *it;
    get_if(j, "clock_offset_us", h.clock_offset_us);
    return h;
  }
  if (type == "model") {
    ModelInfo m;
    get_if(j, "parameters", m.parameters);
    get_if(j, "matmul_parameters", m.matmul_parameters);
    get_if(j, "flops_per_token", m.flops_per_token);
    get_if(j, "flops_formula", m.flops_formula);
    get_if(j, "predicted_peak_bytes", m.predicted_peak_bytes);
    get_if(j, "parameter_bytes", m.parameter_bytes);
    return m;
  }
  if (type == "step") {
    Step s;
    s.step = j.at("step").get<int64_t>();
    get_if(j, "warmup", s.warmup);
    get_if(j, "start_us", s.start_us);
    get_if(j, "end_us", s.end_us);
    get_if(j, "step_ms", s.step_ms);
    get_if(j, "tokens", s.tokens);
    get_if(j, "loss", s.loss);
    if (auto it = j.find("memory"); it != j.end() && it->is_object()) {
      get_if(*it, "allocated_bytes", s.memory.allocated_bytes);
      get_if(*it, "reserved_bytes", s.memory.reserved_bytes);
      get_if(*it, "peak_bytes", s.memory.peak_bytes);
      get_if(*it, "alloc_retries", s.memory.alloc_retries);
    }
    get_if(j, "comm_ms", s.comm_ms);
    get_if(j, "exposed_comm_ms", s.exposed_comm_ms);
    get_if(j, "busbw_gbps", s.busbw_gbps);
    get_if(j, "skipped", s.skipped);
    if (auto it = j.find("intervals"); it != j.end()) {
      if (!it->is_array()) throw std::invalid_argument("'intervals' is not an array");
      s.intervals.reserve(it->size());
      for (const auto& in : *it) s.intervals.push_back(interval_from_json(in));
    }
    return s;
  }
  if (type == "gpu") {
    GpuSample g;
    get_if(j, "index", g.index);
    get_if(j, "util_pct", g.util_pct);
    get_if(j, "mem_used_bytes", g.mem_used_bytes);
    get_if(j, "mem_total_bytes", g.mem_total_bytes);
    get_if(j, "power_w", g.power_w);
    get_if(j, "sm_clock_mhz", g.sm_clock_mhz);
    get_if(j, "temperature_c", g.temperature_c);
    get_if(j, "pcie_tx_mbps", g.pcie_tx_mbps);
    get_if(j, "pcie_rx_mbps", g.pcie_rx_mbps);
    get_if(j, "nvlink_tx_mbps", g.nvlink_tx_mbps);
    get_if(j, "nvlink_rx_mbps", g.nvlink_rx_mbps);
    get_if(j, "cpu_pct", g.cpu_pct);
    get_if(j, "rss_bytes", g.rss_bytes);
    return g;
  }
  if (type == "log") {
    Log l;
    get_if(j, "level", l.level);
    get_if(j, "message", l.message);
    return l;
  }
  if (type == "warning") {
    Warning w;
    get_if(j, "kind", w.kind);
    get_if(j, "message", w.message);
    return w;
  }
  if (type == "error") {
    Error e;
    get_if(j, "kind", e.kind);
    get_if(j, "message", e.message);
    if (auto it = j.find("details"); it != j.end() && it->is_object()) e.details = *it;
    return e;
  }
  if (type == "done") {
    Done d;
    get_if(j, "exit_code", d.exit_code);
    if (auto it = j.find("summary"); it != j.end() && it->is_object()) {
      auto& s = d.summary;
      get_if(*it, "measured_steps", s.measured_steps);
      get_if(*it, "step_ms_median", s.step_ms_median);
      get_if(*it, "step_ms_p25", s.step_ms_p25);
      get_if(*it, "step_ms_p75", s.step_ms_p75);
      get_if(*it, "tokens_per_s", s.tokens_per_s);
      get_if(*it, "mfu", s.mfu);
      get_if(*it, "peak_bytes", s.peak_bytes);
      get_if(*it, "comm_ms_median", s.comm_ms_median);
      get_if(*it, "exposed_comm_ms_median", s.exposed_comm_ms_median);
      get_if(*it, "data_wait_ms_median", s.data_wait_ms_median);
      get_if(*it, "final_loss", s.final_loss);
    }
    return d;
  }
  if (type == "probe") {
    LinkProbe p;
    const auto phase = phase_from_string(j.at("collective").get<std::string>());
    if (!phase || default_lane(*phase) != Lane::Comm) throw std::invalid_argument("'collective' is not a collective");
    p.collective = *phase;
    get_if(j, "dtype", p.dtype);
    p.bytes = j.at("bytes").get<int64_t>();
    get_if(j, "world_size", p.world_size);
    get_if(j, "iterations", p.iterations);
    p.time_us = j.at("time_us").get<double>();
    get_if(j, "algbw_gbps", p.algbw_gbps);
    p.busbw_gbps = j.at("busbw_gbps").get<double>();
    return p;
  }
  throw std::out_of_range("unknown event type '" + std::string(type) + "'");
}

}  // namespace

std::string_view to_string(Lane lane) { return kLaneNames.at(static_cast<size_t>(lane)); }
std::string_view to_string(Phase phase) { return kPhaseNames.at(static_cast<size_t>(phase)); }

std::optional<Lane> lane_from_string(std::string_view s) {
  for (size_t i = 0; i < kLaneNames.size(); ++i)
    if (kLaneNames[i] == s) return static_cast<Lane>(i);
  return std::nullopt;
}

std::optional<Phase> phase_from_string(std::string_view s) {
  for (size_t i = 0; i < kPhaseNames.size(); ++i)
    if (kPhaseNames[i] == s) return static_cast<Phase>(i);
  return std::nullopt;
}

Lane default_lane(Phase phase) {
  switch (phase) {
    case Phase::DataWait:
    case Phase::HostToDevice: return Lane::Host;
    case Phase::AllReduce:
    case Phase::AllGather:
    case Phase::ReduceScatter:
    case Phase::Broadcast: return Lane::Comm;
    default: return Lane::Compute;
  }
}

namespace {
// In the order of the Payload variant's alternatives.
constexpr std::array<std::string_view, std::variant_size_v<Payload>> kTypeNames = {
    "hello", "model", "step", "gpu", "log", "warning", "error", "done", "probe"};
}  // namespace

std::string_view type_name(const Payload& payload) { return kTypeNames.at(payload.index()); }

bool is_event_type(std::string_view type) {
  return std::find(kTypeNames.begin(), kTypeNames.end(), type) != kTypeNames.end();
}

std::string_view Event::type() const { return type_name(payload); }

json to_json(const Event& event) {
  json j = {{"v", event.header.v},
            {"type", type_name(event.payload)},
            {"trial", event.header.trial},
            {"rank", event.header.rank},
            {"t_us", event.header.t_us}};
  std::visit(ToJson{j}, event.payload);
  return j;
}

Event event_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("event is not a JSON object");
  Event e;
  e.header.v = j.at("v").get<int>();
  get_if(j, "trial", e.header.trial);
  get_if(j, "rank", e.header.rank);
  get_if(j, "t_us", e.header.t_us);
  e.payload = payload_from_json(j.at("type").get<std::string>(), j);
  return e;
}

int64_t now_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace tunebench::protocol
