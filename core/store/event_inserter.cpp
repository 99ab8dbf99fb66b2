#include "core/store/event_inserter.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/protocol/event_fields.h"
#include "core/store/limits.h"
#include "core/store/sql_fields.h"

namespace tunebench::store {
namespace {

using SQLite::Statement;
namespace tp = protocol;

void run(Statement& q) {
  q.exec();
  q.reset();
}

// "INSERT [OR REPLACE] INTO table (leading..., <the record's columns>) VALUES (?, ...)".
template <class Record>
std::unique_ptr<Statement> prepare_insert(SQLite::Database& db, const char* verb, const char* table,
                                          std::initializer_list<const char*> leading) {
  std::string columns;
  int count = 0;
  for (const char* c : leading) columns += (count++ ? ", " : "") + std::string(c);
  for (const auto& c : sql_columns<Record>()) columns += (count++ ? ", " : "") + c;
  std::string marks;
  for (int i = 0; i < count; ++i) marks += i ? ",?" : "?";
  return std::make_unique<Statement>(
      db, std::string(verb) + " INTO " + table + " (" + columns + ") VALUES (" + marks + ")");
}

}  // namespace

EventInserter::EventInserter(SQLite::Database& db, int64_t trial_id)
    : m_db(db), m_trial_id(trial_id) {
  m_hello = prepare_insert<tp::Hello>(db, "INSERT OR REPLACE", "rank_env", {"trial_id", "rank", "t_us"});
  m_model = prepare_insert<tp::ModelInfo>(db, "INSERT OR REPLACE", "model_info", {"trial_id", "rank", "t_us"});
  m_step = prepare_insert<tp::Step>(db, "INSERT", "steps", {"trial_id", "rank"});
  m_interval = prepare_insert<tp::Interval>(db, "INSERT", "intervals", {"step_id", "idx"});
  m_sample = prepare_insert<tp::GpuSample>(db, "INSERT", "gpu_samples", {"trial_id", "rank", "t_us"});
  m_done = prepare_insert<tp::Done>(db, "INSERT OR REPLACE", "summaries", {"trial_id", "rank"});
  m_message = std::make_unique<Statement>(db,
                                          "INSERT INTO messages (trial_id, rank, t_us, kind, tag, message, details) "
                                          "VALUES (?,?,?,?,?,?,?)");
  m_problem = std::make_unique<Statement>(db,
      "INSERT INTO read_problems (trial_id, kind, line_number, message, excerpt) VALUES (?,?,?,?,?)");
  m_run_id = std::make_unique<Statement>(db,
      "UPDATE trials SET run_id = ? WHERE id = ? AND run_id = ''");
  // Steps already stored (a trial run again) count as seen.
  Statement seen(db, "SELECT rank, step FROM steps WHERE trial_id = ?");
  seen.bind(1, trial_id);
  while (seen.executeStep()) m_steps_seen.emplace(seen.getColumn(0).getInt(), seen.getColumn(1).getInt64());
  Statement problems(db, "SELECT count(*) FROM read_problems WHERE trial_id = ?");
  problems.bind(1, trial_id);
  if (problems.executeStep()) m_problems_kept = problems.getColumn(0).getInt64();
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
  int64_t counted = 0;
  for (const auto& p : log.problems) {
    insert_problem(p);
    if (p.kind != tp::ReadProblem::Kind::NewerVersion) ++counted;
  }
  m_problems_omitted += std::max<int64_t>(0, log.problem_count - counted);
  finish();
}

void EventInserter::run_id(const std::string& id) {
  bind_text(*m_run_id, 1, id, kMaxShortTextBytes);
  m_run_id->bind(2, m_trial_id);
  run(*m_run_id);
  m_run_id_set = true;
}

void EventInserter::hello(int rank, int64_t t_us, const tp::Hello& h) {
  bind_record(*m_hello, h, {m_trial_id, rank, t_us});
  run(*m_hello);
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
  bind_record(*m_model, m, {m_trial_id, rank, t_us});
  run(*m_model);
}

void EventInserter::step(int rank, const tp::Step& s) {
  if (!m_steps_seen.emplace(rank, s.step).second) {
    insert_problem(
        {tp::ReadProblem::Kind::DuplicateStep,
         0,
         "rank " + std::to_string(rank) + " sent step " + std::to_string(s.step) + " twice; the first is kept",
         {}});
    return;
  }
  bind_record(*m_step, s, {m_trial_id, rank});
  run(*m_step);
  const int64_t step_id = m_db.getLastInsertRowid();
  int64_t idx = 0;
  for (const auto& in : s.intervals) {
    bind_record(*m_interval, in, {step_id, idx++});
    run(*m_interval);
  }
  if (s.gpu_sampled) {
    // Prepared on first use: a file of schema < 6 (tests write such files) has no such table.
    if (!m_step_gpu)
      m_step_gpu = std::make_unique<Statement>(m_db, "INSERT INTO step_gpu (step_id, gpu_busy_ms) VALUES (?,?)");
    m_step_gpu->bind(1, step_id);
    m_step_gpu->bind(2, s.gpu_busy_ms);
    run(*m_step_gpu);
  }
  if (s.memory_sampled) {
    // Prepared on first use: a file of schema < 7 (tests write such files) has no such table.
    if (!m_step_memory) m_step_memory = prepare_insert<tp::MemoryCategories>(m_db, "INSERT", "step_memory", {"step_id"});
    bind_record(*m_step_memory, s.memory_categories, {step_id});
    run(*m_step_memory);
  }
  if (!s.memory_timeline.empty()) {
    // Prepared on first use: a file of schema < 8 (tests write such files) has no such table.
    if (!m_memory_timeline)
      m_memory_timeline =
          prepare_insert<tp::MemoryTimelinePoint>(m_db, "INSERT", "step_memory_timeline", {"step_id", "idx"});
    int64_t point = 0;
    for (const auto& p : s.memory_timeline) {
      bind_record(*m_memory_timeline, p, {step_id, point++});
      run(*m_memory_timeline);
    }
  }
}

void EventInserter::sample(int rank, int64_t t_us, const tp::GpuSample& g) {
  bind_record(*m_sample, g, {m_trial_id, rank, t_us});
  run(*m_sample);
  if (g.counters.any()) {
    // Prepared on first use: a file of schema < 7 has no such table.
    if (!m_counters) m_counters = prepare_insert<tp::GpuCounters>(m_db, "INSERT", "gpu_counters", {"sample_id"});
    bind_record(*m_counters, g.counters, {m_db.getLastInsertRowid()});
    run(*m_counters);
  }
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
  if (details)
    bind_json(q, 7, *details);
  else
    q.bind(7);
  run(q);
}

void EventInserter::done(int rank, const tp::Done& d) {
  bind_record(*m_done, d, {m_trial_id, rank});
  run(*m_done);
}

void EventInserter::probe(int rank, const tp::LinkProbe& p) {
  // Prepared on first use: only probe trials have probe events (and files of schema < 4 lack the table).
  if (!m_probe) m_probe = prepare_insert<tp::LinkProbe>(m_db, "INSERT OR REPLACE", "link_probes", {"trial_id", "rank", "idx"});
  bind_record(*m_probe, p, {m_trial_id, rank, m_probe_count[rank]++});
  run(*m_probe);
}

void EventInserter::insert_problem(const tp::ReadProblem& p) {
  if (p.kind == tp::ReadProblem::Kind::Omitted) return;  // finish() writes the one count
  if (m_problems_kept >= static_cast<int64_t>(tp::TrialLog::kMaxKeptProblems)) {
    ++m_problems_omitted;
    m_last_problem_line = std::max(m_last_problem_line, p.line_number);
    return;
  }
  ++m_problems_kept;
  store_problem(p);
}

void EventInserter::finish() {
  if (m_problems_omitted == 0) return;
  store_problem({tp::ReadProblem::Kind::Omitted, m_last_problem_line,
                 std::to_string(m_problems_omitted) + " more problems were counted but not kept",
                 std::to_string(m_problems_omitted)});
  m_problems_omitted = 0;
}

void EventInserter::store_problem(const tp::ReadProblem& p) {
  Statement& q = *m_problem;
  q.bind(1, m_trial_id);
  q.bindNoCopy(2, tp::to_string(p.kind).data());
  q.bind(3, p.line_number);
  bind_text(q, 4, p.message, kMaxShortTextBytes);
  bind_text(q, 5, p.excerpt, kMaxShortTextBytes);
  run(q);
}

}  // namespace tunebench::store
