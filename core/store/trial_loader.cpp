#include "core/store/trial_loader.h"

#include <sqlite3.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <unordered_map>

#include "core/store/limits.h"
#include "core/store/row_reader.h"
#include "core/store/store_error.h"

namespace tunebench::store {
namespace {

namespace tp = protocol;
using SQLite::Statement;

void load_env(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  Statement q(db,
      "SELECT rank, host, pid, world_size, local_rank, device, device_kind, device_memory_bytes, "
      "driver, cuda, cudnn, nccl, torch, backend, nccl_env, config, clock_offset_us "
      "FROM rank_env WHERE trial_id = ? ORDER BY rank");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "rank_env");
    tp::Hello h;
    const size_t n = kMaxShortTextBytes;
    h.host = r.text(1, n);
    h.pid = r.i64(2);
    h.world_size = r.i32(3);
    h.local_rank = r.i32(4);
    h.device = r.text(5, n);
    h.device_kind = r.text(6, n);
    h.device_memory_bytes = r.i64(7);
    h.driver = r.text(8, n);
    h.cuda = r.text(9, n);
    h.cudnn = r.text(10, n);
    h.nccl = r.text(11, n);
    h.torch = r.text(12, n);
    h.backend = r.text(13, n);
    const nlohmann::json env = r.json(14);
    if (!env.is_object()) throw StoreError("the session file has a bad NCCL environment record");
    for (const auto& [k, v] : env.items())
      if (v.is_string()) h.env[k] = v.get<std::string>();
    h.config = r.json(15);
    h.clock_offset_us = r.i64(16);
    log.ranks[r.i32(0)].hello = std::move(h);
  }
  // Version 3 added the interconnect; older files (opened read-only, unmigrated) have no table.
  Statement has(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rank_topology'");
  if (!has.executeStep()) return;
  Statement t(db, "SELECT rank, topology FROM rank_topology WHERE trial_id = ? ORDER BY rank");
  t.bind(1, id);
  while (t.executeStep()) {
    RowReader r(t, "rank_topology");
    auto it = log.ranks.find(r.i32(0));
    if (it != log.ranks.end() && it->second.hello) it->second.hello->topology = r.text(1, kMaxShortTextBytes);
  }
}

void load_model(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  Statement q(db,
      "SELECT rank, parameters, matmul_parameters, flops_per_token, flops_formula, "
      "predicted_peak_bytes, parameter_bytes FROM model_info WHERE trial_id = ? ORDER BY rank");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "model_info");
    tp::ModelInfo m;
    m.parameters = r.i64(1);
    m.matmul_parameters = r.i64(2);
    m.flops_per_token = r.real(3);
    m.flops_formula = r.text(4, kMaxShortTextBytes);
    m.predicted_peak_bytes = r.i64(5);
    m.parameter_bytes = r.i64(6);
    log.ranks[r.i32(0)].model = std::move(m);
  }
}

void load_steps(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  // Intervals first, keyed by step row id, then attached while steps stream in row order.
  std::unordered_map<int64_t, std::vector<tp::Interval>> intervals;
  Statement iq(db,
      "SELECT i.step_id, i.lane, i.phase, i.start_us, i.end_us, i.label, i.bytes, i.busbw_gbps "
      "FROM intervals i JOIN steps s ON s.id = i.step_id WHERE s.trial_id = ? "
      "ORDER BY i.step_id, i.idx");
  iq.bind(1, id);
  while (iq.executeStep()) {
    RowReader r(iq, "intervals");
    tp::Interval in;
    const std::string lane = r.text(1, 32);
    const std::string phase = r.text(2, 32);
    const auto l = tp::lane_from_string(lane);
    const auto p = tp::phase_from_string(phase);
    if (!l || !p) throw StoreError("the session file has an interval with unknown lane or phase");
    in.lane = *l;
    in.phase = *p;
    in.start_us = r.i64(3);
    in.end_us = r.i64(4);
    in.label = r.text(5, kMaxShortTextBytes);
    in.bytes = r.i64(6);
    in.busbw_gbps = r.real(7);
    intervals[r.i64(0)].push_back(std::move(in));
  }
  Statement q(db,
      "SELECT id, rank, step, warmup, start_us, end_us, step_ms, tokens, loss, allocated_bytes, "
      "reserved_bytes, peak_bytes, alloc_retries, comm_ms, exposed_comm_ms, busbw_gbps, skipped "
      "FROM steps WHERE trial_id = ? ORDER BY rank, id");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "steps");
    tp::Step s;
    s.step = r.i64(2);
    s.warmup = r.flag(3);
    s.start_us = r.i64(4);
    s.end_us = r.i64(5);
    s.step_ms = r.real(6);
    s.tokens = r.i64(7);
    s.loss = r.real(8);
    s.memory.allocated_bytes = r.i64(9);
    s.memory.reserved_bytes = r.i64(10);
    s.memory.peak_bytes = r.i64(11);
    s.memory.alloc_retries = r.i64(12);
    s.comm_ms = r.real(13);
    s.exposed_comm_ms = r.real(14);
    s.busbw_gbps = r.real(15);
    s.skipped = r.flag(16);
    if (auto it = intervals.find(r.i64(0)); it != intervals.end()) s.intervals = std::move(it->second);
    log.ranks[r.i32(1)].steps.push_back(std::move(s));
  }
}

void load_samples(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  Statement q(db,
      "SELECT rank, t_us, gpu_index, util_pct, mem_used_bytes, mem_total_bytes, power_w, "
      "sm_clock_mhz, temperature_c, pcie_tx_mbps, pcie_rx_mbps, nvlink_tx_mbps, nvlink_rx_mbps, "
      "cpu_pct, rss_bytes FROM gpu_samples WHERE trial_id = ? ORDER BY rank, id");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "gpu_samples");
    tp::GpuSample g;
    g.index = r.i32(2);
    g.util_pct = r.opt_real(3);
    g.mem_used_bytes = r.opt_i64(4);
    g.mem_total_bytes = r.opt_i64(5);
    g.power_w = r.opt_real(6);
    g.sm_clock_mhz = r.opt_real(7);
    g.temperature_c = r.opt_real(8);
    g.pcie_tx_mbps = r.opt_real(9);
    g.pcie_rx_mbps = r.opt_real(10);
    g.nvlink_tx_mbps = r.opt_real(11);
    g.nvlink_rx_mbps = r.opt_real(12);
    g.cpu_pct = r.opt_real(13);
    g.rss_bytes = r.opt_i64(14);
    log.ranks[r.i32(0)].samples.push_back({r.i64(1), std::move(g)});
  }
}

void load_messages(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  Statement q(db,
      "SELECT rank, t_us, kind, tag, message, details FROM messages WHERE trial_id = ? "
      "ORDER BY rank, id");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "messages");
    tp::RankLog& rl = log.ranks[r.i32(0)];
    const int64_t t = r.i64(1);
    const std::string kind = r.text(2, 16);
    std::string tag = r.text(3, kMaxShortTextBytes);
    std::string text = r.text(4, kMaxMessageBytes);
    if (kind == "log") {
      rl.logs.push_back({t, {std::move(tag), std::move(text)}});
    } else if (kind == "warning") {
      rl.warnings.push_back({t, {std::move(tag), std::move(text)}});
    } else if (kind == "error") {
      tp::Error e{std::move(tag), std::move(text), nlohmann::json::object()};
      if (q.getColumn(5).getType() != SQLITE_NULL) e.details = r.json(5);
      rl.errors.push_back({t, std::move(e)});
    } else {
      throw StoreError("the session file has a message of unknown kind");
    }
  }
}

void load_summaries(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  Statement q(db,
      "SELECT rank, exit_code, measured_steps, step_ms_median, step_ms_p25, step_ms_p75, "
      "tokens_per_s, mfu, peak_bytes, comm_ms_median, exposed_comm_ms_median, "
      "data_wait_ms_median, final_loss FROM summaries WHERE trial_id = ? ORDER BY rank");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "summaries");
    tp::Done d;
    d.exit_code = r.i32(1);
    d.summary.measured_steps = r.i64(2);
    d.summary.step_ms_median = r.real(3);
    d.summary.step_ms_p25 = r.real(4);
    d.summary.step_ms_p75 = r.real(5);
    d.summary.tokens_per_s = r.real(6);
    d.summary.mfu = r.real(7);
    d.summary.peak_bytes = r.i64(8);
    d.summary.comm_ms_median = r.real(9);
    d.summary.exposed_comm_ms_median = r.real(10);
    d.summary.data_wait_ms_median = r.real(11);
    d.summary.final_loss = r.real(12);
    log.ranks[r.i32(0)].done = d;
  }
}

void load_problems(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  Statement q(db,
      "SELECT kind, line_number, message, excerpt FROM read_problems WHERE trial_id = ? ORDER BY id");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "read_problems");
    tp::ReadProblem p{tp::ReadProblem::Kind::BadJson, 0, {}, {}};
    const std::string kind = r.text(0, 32);
    for (int k = 0; k <= static_cast<int>(tp::ReadProblem::Kind::TruncatedLine); ++k)
      if (tp::to_string(static_cast<tp::ReadProblem::Kind>(k)) == kind)
        p.kind = static_cast<tp::ReadProblem::Kind>(k);
    p.line_number = r.i64(1);
    p.message = r.text(2, kMaxShortTextBytes);
    p.excerpt = r.text(3, kMaxShortTextBytes);
    log.problems.push_back(std::move(p));
  }
}

void load_probes(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  // Version 4 added link probes; older files (opened read-only, unmigrated) have no table.
  Statement has(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'link_probes'");
  if (!has.executeStep()) return;
  Statement q(db,
      "SELECT rank, collective, dtype, bytes, world_size, iterations, time_us, algbw_gbps, busbw_gbps "
      "FROM link_probes WHERE trial_id = ? ORDER BY rank, idx");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "link_probes");
    tp::LinkProbe p;
    const auto phase = tp::phase_from_string(r.text(1, 32));
    if (!phase || tp::default_lane(*phase) != tp::Lane::Comm)
      throw StoreError("the session file has a link probe of an unknown collective");
    p.collective = *phase;
    p.dtype = r.text(2, kMaxShortTextBytes);
    p.bytes = r.i64(3);
    p.world_size = r.i32(4);
    p.iterations = r.i32(5);
    p.time_us = r.real(6);
    p.algbw_gbps = r.real(7);
    p.busbw_gbps = r.real(8);
    log.ranks[r.i32(0)].probes.push_back(std::move(p));
  }
}

}  // namespace

tp::TrialLog load_trial_log(SQLite::Database& db, int64_t trial_id) {
  tp::TrialLog log;
  {
    Statement q(db, "SELECT run_id FROM trials WHERE id = ?");
    q.bind(1, trial_id);
    if (!q.executeStep()) throw StoreError("there is no trial " + std::to_string(trial_id));
    log.trial = RowReader(q, "trials").text(0, kMaxShortTextBytes);
  }
  load_env(db, trial_id, log);
  load_model(db, trial_id, log);
  load_steps(db, trial_id, log);
  load_samples(db, trial_id, log);
  load_messages(db, trial_id, log);
  load_summaries(db, trial_id, log);
  load_problems(db, trial_id, log);
  load_probes(db, trial_id, log);
  return log;
}

std::map<int, tp::Hello> load_trial_environment(SQLite::Database& db, int64_t trial_id) {
  tp::TrialLog log;
  load_env(db, trial_id, log);
  std::map<int, tp::Hello> out;
  for (auto& [rank, r] : log.ranks) out.emplace(rank, std::move(*r.hello));
  return out;
}

std::map<int, tp::Done> load_trial_summaries(SQLite::Database& db, int64_t trial_id) {
  tp::TrialLog log;
  load_summaries(db, trial_id, log);
  std::map<int, tp::Done> out;
  for (auto& [rank, r] : log.ranks) out.emplace(rank, *r.done);
  return out;
}

}  // namespace tunebench::store
