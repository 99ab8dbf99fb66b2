#include "core/store/trial_loader.h"

#include <sqlite3.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <unordered_map>

#include "core/store/limits.h"
#include "core/store/row_reader.h"
#include "core/store/sql_fields.h"
#include "core/store/store_error.h"

namespace tunebench::store {
namespace {

namespace tp = protocol;
using SQLite::Statement;

int rank_of(const RowReader& r, int column) { return static_cast<int>(r.i64(column, tp::kRankRange)); }

void load_env(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  Statement q(db, "SELECT rank, " + sql_column_list<tp::Hello>() + " FROM rank_env WHERE trial_id = ? ORDER BY rank");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "rank_env");
    tp::Hello h;
    read_record(r, 1, h);
    log.ranks[rank_of(r, 0)].hello = std::move(h);
  }
  // Version 3 added the interconnect; older files (opened read-only, unmigrated) have no table.
  Statement has(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rank_topology'");
  if (!has.executeStep()) return;
  Statement t(db, "SELECT rank, topology FROM rank_topology WHERE trial_id = ? ORDER BY rank");
  t.bind(1, id);
  while (t.executeStep()) {
    RowReader r(t, "rank_topology");
    auto it = log.ranks.find(rank_of(r, 0));
    if (it != log.ranks.end() && it->second.hello) it->second.hello->topology = r.text(1, kMaxShortTextBytes);
  }
}

void load_model(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  Statement q(db,
              "SELECT rank, " + sql_column_list<tp::ModelInfo>() + " FROM model_info WHERE trial_id = ? ORDER BY rank");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "model_info");
    tp::ModelInfo m;
    read_record(r, 1, m);
    log.ranks[rank_of(r, 0)].model = std::move(m);
  }
}

// Whether the file has `table` (files of older versions, opened read-only, are not migrated).
bool has_table(SQLite::Database& db, const char* table) {
  Statement has(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  has.bind(1, table);
  return has.executeStep();
}

// The rows of trial `id` in a table of per-step records (step_id, then the record's columns;
// ordered by step_id and idx when `ordered`): `take(step_id, record)` for each, in row order.
// Nothing when the file predates the table (opened read-only, unmigrated).
template <class Record, class Take>
void read_step_records(SQLite::Database& db, const char* table, int64_t id, bool ordered, Take&& take) {
  if (!has_table(db, table)) return;
  Statement q(db, "SELECT t.step_id, " + sql_column_list<Record>("t") + " FROM " + table +
                      " t JOIN steps s ON s.id = t.step_id WHERE s.trial_id = ?" +
                      (ordered ? " ORDER BY t.step_id, t.idx" : ""));
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, table);
    Record record;
    read_record(r, 1, record);
    take(r.i64(0), std::move(record));
  }
}

void load_steps(SQLite::Database& db, int64_t id, tp::TrialLog& log, bool with_intervals) {
  // Intervals first, keyed by step row id, then attached while steps stream in row order.
  std::unordered_map<int64_t, std::vector<tp::Interval>> intervals;
  if (with_intervals)
    read_step_records<tp::Interval>(db, "intervals", id, true, [&](int64_t step, tp::Interval in) {
      intervals[step].push_back(std::move(in));
    });
  // Version 6 added kernel-sampled steps.
  std::unordered_map<int64_t, double> gpu_busy;
  if (has_table(db, "step_gpu")) {
    Statement gq(db, "SELECT g.step_id, g.gpu_busy_ms FROM step_gpu g JOIN steps s ON s.id = g.step_id "
                     "WHERE s.trial_id = ?");
    gq.bind(1, id);
    while (gq.executeStep()) {
      RowReader r(gq, "step_gpu");
      gpu_busy[r.i64(0)] = r.real(1);
    }
  }
  // Version 7 added memory-sampled steps.
  std::unordered_map<int64_t, tp::MemoryCategories> categories;
  read_step_records<tp::MemoryCategories>(db, "step_memory", id, false, [&](int64_t step, tp::MemoryCategories c) {
    categories[step] = std::move(c);
  });
  // Version 8 added memory timelines; a crafted file's phase or length is refused as the reader's is.
  std::unordered_map<int64_t, std::vector<tp::MemoryTimelinePoint>> timelines;
  read_step_records<tp::MemoryTimelinePoint>(
      db, "step_memory_timeline", id, true, [&](int64_t step, const tp::MemoryTimelinePoint& p) {
        if (!tp::is_memory_timeline_phase(p.phase))
          throw StoreError("the session file has a memory timeline with a phase it does not read");
        auto& points = timelines[step];
        if (points.size() >= tp::kMaxMemoryTimelinePoints)
          throw StoreError("the session file has a memory timeline longer than a step's may be");
        points.push_back(p);
      });
  Statement q(db,
              "SELECT id, rank, " + sql_column_list<tp::Step>() + " FROM steps WHERE trial_id = ? ORDER BY rank, id");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "steps");
    tp::Step s;
    read_record(r, 2, s);
    if (auto it = gpu_busy.find(r.i64(0)); it != gpu_busy.end()) {
      s.gpu_sampled = true;
      s.gpu_busy_ms = it->second;
    }
    if (auto it = categories.find(r.i64(0)); it != categories.end()) {
      s.memory_sampled = true;
      s.memory_categories = std::move(it->second);
    }
    if (auto it = timelines.find(r.i64(0)); it != timelines.end()) s.memory_timeline = std::move(it->second);
    if (auto it = intervals.find(r.i64(0)); it != intervals.end()) s.intervals = std::move(it->second);
    tp::RankLog& rl = log.ranks[rank_of(r, 1)];
    // A crafted file may hold a step twice; like the reader, keep the first.
    if (!rl.steps.empty() && rl.steps.back().step >= s.step &&
        std::any_of(rl.steps.begin(), rl.steps.end(), [&](const tp::Step& o) { return o.step == s.step; }))
      continue;
    rl.steps.push_back(std::move(s));
  }
}

void load_samples(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  // Version 7 added the counters beyond the basic sample (energy, GPM).
  std::unordered_map<int64_t, tp::GpuCounters> counters;
  if (has_table(db, "gpu_counters")) {
    Statement cq(db, "SELECT c.sample_id, " + sql_column_list<tp::GpuCounters>("c") +
                         " FROM gpu_counters c JOIN gpu_samples g ON g.id = c.sample_id WHERE g.trial_id = ?");
    cq.bind(1, id);
    while (cq.executeStep()) {
      RowReader r(cq, "gpu_counters");
      read_record(r, 1, counters[r.i64(0)]);
    }
  }
  Statement q(db, "SELECT id, rank, t_us, " + sql_column_list<tp::GpuSample>() +
                      " FROM gpu_samples WHERE trial_id = ? ORDER BY rank, id");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "gpu_samples");
    tp::GpuSample g;
    read_record(r, 3, g);
    if (auto it = counters.find(r.i64(0)); it != counters.end()) g.counters = it->second;
    log.ranks[rank_of(r, 1)].samples.push_back({r.i64(2, tp::kTimeRange), std::move(g)});
  }
}

void load_messages(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  Statement q(db,
      "SELECT rank, t_us, kind, tag, message, details FROM messages WHERE trial_id = ? "
      "ORDER BY rank, id");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "messages");
    tp::RankLog& rl = log.ranks[rank_of(r, 0)];
    const int64_t t = r.i64(1, tp::kTimeRange);
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
  Statement q(db, "SELECT rank, " + sql_column_list<tp::Done>() + " FROM summaries WHERE trial_id = ? ORDER BY rank");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "summaries");
    tp::Done d;
    read_record(r, 1, d);
    log.ranks[rank_of(r, 0)].done = d;
  }
}

void load_problems(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  Statement q(db,
      "SELECT kind, line_number, message, excerpt FROM read_problems WHERE trial_id = ? ORDER BY id");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "read_problems");
    const auto kind = tp::problem_kind_from_string(r.text(0, 32));
    if (!kind) throw StoreError("the session file has a read problem of unknown kind");
    log.add_problem({*kind, r.i64(1), r.text(2, kMaxShortTextBytes), r.text(3, kMaxShortTextBytes)});
  }
}

void load_probes(SQLite::Database& db, int64_t id, tp::TrialLog& log) {
  // Version 4 added link probes; older files (opened read-only, unmigrated) have no table.
  Statement has(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'link_probes'");
  if (!has.executeStep()) return;
  Statement q(db, "SELECT rank, " + sql_column_list<tp::LinkProbe>() + " FROM link_probes WHERE trial_id = ? ORDER BY rank, idx");
  q.bind(1, id);
  while (q.executeStep()) {
    RowReader r(q, "link_probes");
    tp::LinkProbe p;
    read_record(r, 1, p);
    if (tp::default_lane(p.collective) != tp::Lane::Comm)
      throw StoreError("the session file has a link probe of an unknown collective");
    log.ranks[rank_of(r, 0)].probes.push_back(std::move(p));
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
  load_steps(db, trial_id, log, true);
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

tp::TrialLog load_trial_steps(SQLite::Database& db, int64_t trial_id) {
  tp::TrialLog log;
  load_env(db, trial_id, log);
  load_steps(db, trial_id, log, false);
  return log;
}

std::map<int, tp::Done> load_trial_summaries(SQLite::Database& db, int64_t trial_id) {
  tp::TrialLog log;
  load_summaries(db, trial_id, log);
  std::map<int, tp::Done> out;
  for (auto& [rank, r] : log.ranks) out.emplace(rank, *r.done);
  return out;
}

}  // namespace tunebench::store
