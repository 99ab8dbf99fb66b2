#include "tests/core/analysis/synthetic_trial.h"

#include "core/protocol/event_reader.h"
#include "core/protocol/event_writer.h"

namespace tunebench::testing {

namespace tp = protocol;

namespace {
constexpr int64_t kT0 = 1'764'460'800'000'000;  // a fixed epoch time in µs
}

tp::Interval iv(tp::Phase phase, int64_t start_us, int64_t end_us, int64_t bytes, double busbw_gbps) {
  tp::Interval in;
  in.lane = tp::default_lane(phase);
  in.phase = phase;
  in.start_us = start_us;
  in.end_us = end_us;
  in.bytes = bytes;
  in.busbw_gbps = busbw_gbps;
  return in;
}

tp::Interval iv_on(tp::Lane lane, tp::Phase phase, int64_t start_us, int64_t end_us) {
  tp::Interval in = iv(phase, start_us, end_us);
  in.lane = lane;
  return in;
}

SyntheticTrial::SyntheticTrial(std::string id, config::TrialConfig config, std::string device,
                               int64_t device_memory_bytes)
    : m_id(std::move(id)),
      m_config(std::move(config)),
      m_device(std::move(device)),
      m_device_memory_bytes(device_memory_bytes) {}

tp::Step& SyntheticTrial::add_step(int rank, int64_t index, int64_t step_us, std::vector<tp::Interval> relative,
                                   int64_t tokens, bool warmup) {
  tp::Step s;
  s.step = index;
  s.warmup = warmup;
  s.start_us = kT0 + index * step_us;
  s.end_us = s.start_us + step_us;
  s.step_ms = static_cast<double>(step_us) / 1000.0;
  s.tokens = tokens;
  s.loss = 10.0;
  s.memory.peak_bytes = m_peak_bytes;
  s.memory.allocated_bytes = m_peak_bytes / 2;
  s.memory.reserved_bytes = m_peak_bytes;
  s.memory.alloc_retries = m_alloc_retries;
  for (auto& in : relative) {
    in.start_us += s.start_us;
    in.end_us += s.start_us;
    s.intervals.push_back(in);
  }
  tp::Event e;
  e.header.trial = m_id;
  e.header.rank = rank;
  e.header.t_us = s.end_us;
  e.payload = s;
  m_body.push_back(std::move(e));
  return m_body.back().as<tp::Step>();
}

void SyntheticTrial::add_steps(int64_t warmup, int64_t measured, int64_t step_us,
                               const std::vector<tp::Interval>& relative, int64_t tokens_per_rank) {
  for (int64_t i = 0; i < warmup + measured; ++i)
    for (int r = 0; r < m_config.world_size; ++r)
      add_step(r, i, step_us, relative, tokens_per_rank, i < warmup);
}

void SyntheticTrial::add_error(int rank, std::string kind, std::string message) {
  tp::Event e;
  e.header.trial = m_id;
  e.header.rank = rank;
  e.header.t_us = kT0;
  e.payload = tp::Error{std::move(kind), std::move(message), nlohmann::json::object()};
  m_body.push_back(std::move(e));
}

void SyntheticTrial::add_gpu_sample(int rank, int64_t offset_us, double util_pct) {
  tp::Event e;
  e.header.trial = m_id;
  e.header.rank = rank;
  e.header.t_us = kT0 + offset_us;
  tp::GpuSample g;
  g.index = rank;
  g.util_pct = util_pct;
  e.payload = g;
  m_body.push_back(std::move(e));
}

std::string SyntheticTrial::jsonl() const {
  std::string out;
  auto header = [&](int rank) {
    tp::Header h;
    h.trial = m_id;
    h.rank = rank;
    h.t_us = kT0 - 1'000'000;
    return h;
  };
  for (int r = 0; r < m_config.world_size; ++r) {
    tp::Hello hello;
    hello.host = "test-host";
    hello.world_size = m_config.world_size;
    hello.local_rank = r;
    hello.device = m_device;
    hello.device_kind = m_device == "cpu" ? "cpu" : "cuda";
    hello.device_memory_bytes = m_device_memory_bytes;
    hello.backend = m_config.world_size > 1 ? "nccl" : "none";
    hello.config = config::to_json(m_config);
    out += tp::format_line({header(r), hello});
    tp::ModelInfo model;
    model.parameters = m_parameters;
    out += tp::format_line({header(r), model});
  }
  for (const auto& e : m_body)
    out += tp::format_line(e);
  return out;
}

tp::TrialLog SyntheticTrial::log() const { return parse_log(jsonl()); }

tp::TrialLog parse_log(const std::string& jsonl) {
  tp::TrialLog log;
  tp::TrialLogBuilder builder(log);
  tp::EventReader reader(builder);
  reader.feed(jsonl);
  reader.finish();
  return log;
}

}  // namespace tunebench::testing
