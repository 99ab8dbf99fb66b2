#include "core/store/event_inserter.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/store/limits.h"

namespace tunebench::store {
namespace {

using SQLite::Statement;
namespace tp = protocol;

void bind_text(Statement& q, int index, const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) q.bind(index, s);
  else q.bind(index, bounded(s, max_bytes));
}
template <class T> void bind_opt(Statement& q, int index, const std::optional<T>& v) {
  if (v) q.bind(index, *v);
  else q.bind(index);
}
// A JSON document, dumped with invalid UTF-8 replaced (dump() would throw on it).
std::string json_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
void run(Statement& q) {
  q.exec();
  q.reset();
}

}  // namespace

EventInserter::EventInserter(SQLite::Database& db, int64_t trial_id)
    : m_db(db), m_trial_id(trial_id) {
  m_hello = std::make_unique<Statement>(db,
      "INSERT OR REPLACE INTO rank_env (trial_id, rank, t_us, host, pid, world_size, local_rank, "
      "device, device_kind, device_memory_bytes, driver, cuda, cudnn, nccl, torch, backend, "
      "nccl_env, config, clock_offset_us) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  m_model = std::make_unique<Statement>(db,
      "INSERT OR REPLACE INTO model_info (trial_id, rank, t_us, parameters, matmul_parameters, "
      "flops_per_token, flops_formula, predicted_peak_bytes, parameter_bytes) "
      "VALUES (?,?,?,?,?,?,?,?,?)");
  m_step = std::make_unique<Statement>(db,
      "INSERT INTO steps (trial_id, rank, step, warmup, start_us, end_us, step_ms, tokens, loss, "
      "allocated_bytes, reserved_bytes, peak_bytes, alloc_retries, comm_ms, exposed_comm_ms, "
      "busbw_gbps, skipped) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  m_interval = std::make_unique<Statement>(db,
      "INSERT INTO intervals (step_id, idx, lane, phase, start_us, end_us, label, bytes, "
      "busbw_gbps) VALUES (?,?,?,?,?,?,?,?,?)");
  m_sample = std::make_unique<Statement>(db,
      "INSERT INTO gpu_samples (trial_id, rank, t_us, gpu_index, util_pct, mem_used_bytes, "
      "mem_total_bytes, power_w, sm_clock_mhz, temperature_c, pcie_tx_mbps, pcie_rx_mbps, "
      "nvlink_tx_mbps, nvlink_rx_mbps, cpu_pct, rss_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  m_message = std::make_unique<Statement>(db,
      "INSERT INTO messages (trial_id, rank, t_us, kind, tag, message, details) "
      "VALUES (?,?,?,?,?,?,?)");
  m_done = std::make_unique<Statement>(db,
      "INSERT OR REPLACE INTO summaries (trial_id, rank, exit_code, measured_steps, "
      "step_ms_median, step_ms_p25, step_ms_p75, tokens_per_s, mfu, peak_bytes, comm_ms_median, "
      "exposed_comm_ms_median, data_wait_ms_median, final_loss) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  m_problem = std::make_unique<Statement>(db,
      "INSERT INTO read_problems (trial_id, kind, line_number, message, excerpt) VALUES (?,?,?,?,?)");
  m_run_id = std::make_unique<Statement>(db,
      "UPDATE trials SET run_id = ? WHERE id = ? AND run_id = ''");
}

EventInserter::~EventInserter() = default;

void EventInserter::insert(const tp::Event& event) {
  const int rank = event.header.rank;
  const int64_t t = event.header.t_us;
  if (!m_run_id_set && !event.header.trial.empty()) run_id(event.header.trial);
  std::visit(
      [&](const auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, tp::Hello>) hello(rank, t, p);
        else if constexpr (std::is_same_v<T, tp::ModelInfo>) model(rank, t, p);
        else if constexpr (std::is_same_v<T, tp::Step>) step(rank, p);
        else if constexpr (std::is_same_v<T, tp::GpuSample>) sample(rank, t, p);
        else if constexpr (std::is_same_v<T, tp::Log>) message(rank, t, "log", p.level, p.message, nullptr);
        else if constexpr (std::is_same_v<T, tp::Warning>) message(rank, t, "warning", p.kind, p.message, nullptr);
        else if constexpr (std::is_same_v<T, tp::Error>) message(rank, t, "error", p.kind, p.message, &p.details);
        else if constexpr (std::is_same_v<T, tp::Done>) done(rank, p);
        else if constexpr (std::is_same_v<T, tp::LinkProbe>) probe(rank, p);
      },
      event.payload);
}

void EventInserter::insert_log(const tp::TrialLog& log) {
  if (!log.trial.empty()) run_id(log.trial);
  for (const auto& [rank, r] : log.ranks) {
    const int64_t first_us = r.steps.empty() ? 0 : r.steps.front().start_us;
    if (r.hello) hello(rank, first_us, *r.hello);
    if (r.model) model(rank, first_us, *r.model);
    for (const auto& s : r.steps) step(rank, s);
    for (const auto& g : r.samples) sample(rank, g.t_us, g.value);
    for (const auto& l : r.logs) message(rank, l.t_us, "log", l.value.level, l.value.message, nullptr);
    for (const auto& w : r.warnings)
      message(rank, w.t_us, "warning", w.value.kind, w.value.message, nullptr);
    for (const auto& e : r.errors)
      message(rank, e.t_us, "error", e.value.kind, e.value.message, &e.value.details);
    if (r.done) done(rank, *r.done);
    for (const auto& p : r.probes) probe(rank, p);
  }
  for (const auto& p : log.problems) insert_problem(p);
}

void EventInserter::run_id(const std::string& id) {
  bind_text(*m_run_id, 1, id, kMaxShortTextBytes);
  m_run_id->bind(2, m_trial_id);
  run(*m_run_id);
  m_run_id_set = true;
}

void EventInserter::hello(int rank, int64_t t_us, const tp::Hello& h) {
  Statement& q = *m_hello;
  q.bind(1, m_trial_id);
  q.bind(2, rank);
  q.bind(3, t_us);
  bind_text(q, 4, h.host, kMaxShortTextBytes);
  q.bind(5, h.pid);
  q.bind(6, h.world_size);
  q.bind(7, h.local_rank);
  bind_text(q, 8, h.device, kMaxShortTextBytes);
  bind_text(q, 9, h.device_kind, kMaxShortTextBytes);
  q.bind(10, h.device_memory_bytes);
  bind_text(q, 11, h.driver, kMaxShortTextBytes);
  bind_text(q, 12, h.cuda, kMaxShortTextBytes);
  bind_text(q, 13, h.cudnn, kMaxShortTextBytes);
  bind_text(q, 14, h.nccl, kMaxShortTextBytes);
  bind_text(q, 15, h.torch, kMaxShortTextBytes);
  bind_text(q, 16, h.backend, kMaxShortTextBytes);
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : h.env) env[bounded(k, kMaxShortTextBytes)] = bounded(v, kMaxShortTextBytes);
  q.bind(17, json_text(env));
  const std::string config = json_text(h.config);
  q.bind(18, config.size() <= kMaxJsonBytes ? config : std::string("{}"));
  q.bind(19, h.clock_offset_us);
  run(q);
  if (!h.topology.empty()) {
    // Prepared on first use: a file of schema < 3 (tests write such files) has no such table.
    if (!m_topology)
      m_topology = std::make_unique<Statement>(m_db,
          "INSERT OR REPLACE INTO rank_topology (trial_id, rank, topology) VALUES (?,?,?)");
    Statement& t = *m_topology;
    t.bind(1, m_trial_id);
    t.bind(2, rank);
    bind_text(t, 3, h.topology, kMaxShortTextBytes);
    run(t);
  }
}

void EventInserter::model(int rank, int64_t t_us, const tp::ModelInfo& m) {
  Statement& q = *m_model;
  q.bind(1, m_trial_id);
  q.bind(2, rank);
  q.bind(3, t_us);
  q.bind(4, m.parameters);
  q.bind(5, m.matmul_parameters);
  q.bind(6, m.flops_per_token);
  bind_text(q, 7, m.flops_formula, kMaxShortTextBytes);
  q.bind(8, m.predicted_peak_bytes);
  q.bind(9, m.parameter_bytes);
  run(q);
}

void EventInserter::step(int rank, const tp::Step& s) {
  Statement& q = *m_step;
  q.bind(1, m_trial_id);
  q.bind(2, rank);
  q.bind(3, s.step);
  q.bind(4, s.warmup ? 1 : 0);
  q.bind(5, s.start_us);
  q.bind(6, s.end_us);
  q.bind(7, s.step_ms);
  q.bind(8, s.tokens);
  q.bind(9, s.loss);
  q.bind(10, s.memory.allocated_bytes);
  q.bind(11, s.memory.reserved_bytes);
  q.bind(12, s.memory.peak_bytes);
  q.bind(13, s.memory.alloc_retries);
  q.bind(14, s.comm_ms);
  q.bind(15, s.exposed_comm_ms);
  q.bind(16, s.busbw_gbps);
  q.bind(17, s.skipped ? 1 : 0);
  run(q);
  const int64_t step_id = m_db.getLastInsertRowid();
  Statement& iq = *m_interval;
  int idx = 0;
  for (const auto& in : s.intervals) {
    iq.bind(1, step_id);
    iq.bind(2, idx++);
    iq.bindNoCopy(3, tp::to_string(in.lane).data());
    iq.bindNoCopy(4, tp::to_string(in.phase).data());
    iq.bind(5, in.start_us);
    iq.bind(6, in.end_us);
    bind_text(iq, 7, in.label, kMaxShortTextBytes);
    iq.bind(8, in.bytes);
    iq.bind(9, in.busbw_gbps);
    run(iq);
  }
}

void EventInserter::sample(int rank, int64_t t_us, const tp::GpuSample& g) {
  Statement& q = *m_sample;
  q.bind(1, m_trial_id);
  q.bind(2, rank);
  q.bind(3, t_us);
  q.bind(4, g.index);
  bind_opt(q, 5, g.util_pct);
  bind_opt(q, 6, g.mem_used_bytes);
  bind_opt(q, 7, g.mem_total_bytes);
  bind_opt(q, 8, g.power_w);
  bind_opt(q, 9, g.sm_clock_mhz);
  bind_opt(q, 10, g.temperature_c);
  bind_opt(q, 11, g.pcie_tx_mbps);
  bind_opt(q, 12, g.pcie_rx_mbps);
  bind_opt(q, 13, g.nvlink_tx_mbps);
  bind_opt(q, 14, g.nvlink_rx_mbps);
  bind_opt(q, 15, g.cpu_pct);
  bind_opt(q, 16, g.rss_bytes);
  run(q);
}

void EventInserter::message(int rank, int64_t t_us, const char* kind, const std::string& tag,
                            const std::string& text, const nlohmann::json* details) {
  Statement& q = *m_message;
  q.bind(1, m_trial_id);
  q.bind(2, rank);
  q.bind(3, t_us);
  q.bindNoCopy(4, kind);
  bind_text(q, 5, tag, kMaxShortTextBytes);
  bind_text(q, 6, text, kMaxMessageBytes);
  if (details) {
    const std::string d = json_text(*details);
    q.bind(7, d.size() <= kMaxJsonBytes ? d : std::string("{}"));
  } else {
    q.bind(7);
  }
  run(q);
}

void EventInserter::done(int rank, const tp::Done& d) {
  Statement& q = *m_done;
  const tp::Summary& s = d.summary;
  q.bind(1, m_trial_id);
  q.bind(2, rank);
  q.bind(3, d.exit_code);
  q.bind(4, s.measured_steps);
  q.bind(5, s.step_ms_median);
  q.bind(6, s.step_ms_p25);
  q.bind(7, s.step_ms_p75);
  q.bind(8, s.tokens_per_s);
  q.bind(9, s.mfu);
  q.bind(10, s.peak_bytes);
  q.bind(11, s.comm_ms_median);
  q.bind(12, s.exposed_comm_ms_median);
  q.bind(13, s.data_wait_ms_median);
  q.bind(14, s.final_loss);
  run(q);
}

void EventInserter::probe(int rank, const tp::LinkProbe& p) {
  // Prepared on first use: only probe trials have probe events (and files of schema < 4 lack the table).
  if (!m_probe)
    m_probe = std::make_unique<Statement>(m_db,
        "INSERT OR REPLACE INTO link_probes (trial_id, rank, idx, collective, dtype, bytes, world_size, "
        "iterations, time_us, algbw_gbps, busbw_gbps) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  Statement& q = *m_probe;
  q.bind(1, m_trial_id);
  q.bind(2, rank);
  q.bind(3, m_probe_count[rank]++);
  q.bindNoCopy(4, tp::to_string(p.collective).data());
  bind_text(q, 5, p.dtype, kMaxShortTextBytes);
  q.bind(6, p.bytes);
  q.bind(7, p.world_size);
  q.bind(8, p.iterations);
  q.bind(9, p.time_us);
  q.bind(10, p.algbw_gbps);
  q.bind(11, p.busbw_gbps);
  run(q);
}

void EventInserter::insert_problem(const tp::ReadProblem& p) {
  Statement& q = *m_problem;
  q.bind(1, m_trial_id);
  q.bindNoCopy(2, tp::to_string(p.kind).data());
  q.bind(3, p.line_number);
  bind_text(q, 4, p.message, kMaxShortTextBytes);
  bind_text(q, 5, p.excerpt, kMaxShortTextBytes);
  run(q);
}

}  // namespace tunebench::store
