// Writing protocol events into a session's tables through prepared, parameterised statements.
//
// Shared by the live TrialWriter and the .jsonl importer. The caller owns the transaction: this
// class only inserts, so batching policy lives in one place (TrialWriter) and an import is one
// transaction. Columns and binds come from the field lists of protocol/event_fields.h; every
// string is bounded (limits.h) before it is bound. A step index a rank already stored is not
// stored again: it becomes a `duplicate-step` problem. Problems beyond
// TrialLog::kMaxKeptProblems are only counted, and finish() stores their count.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "core/protocol/event_reader.h"
#include "core/protocol/events.h"
#include "core/protocol/trial_log.h"

namespace SQLite {
class Database;
class Statement;
}  // namespace SQLite

namespace tunebench::store {

class EventInserter {
 public:
  // Prepares its statements on `db`, which must outlive the inserter.
  EventInserter(SQLite::Database& db, int64_t trial_id);
  ~EventInserter();
  EventInserter(const EventInserter&) = delete;
  EventInserter& operator=(const EventInserter&) = delete;

  void insert(const protocol::Event& event);
  void insert_problem(const protocol::ReadProblem& problem);
  // Every record of a TrialLog (the importer's path). Header times the TrialLog does not keep
  // (hello, model, step) are stored from the records' own times. Calls finish().
  void insert_log(const protocol::TrialLog& log);
  // Stores the count of problems that were not kept (one `omitted` row), if any.
  void finish();

 private:
  void hello(int rank, int64_t t_us, const protocol::Hello& h);
  void model(int rank, int64_t t_us, const protocol::ModelInfo& m);
  void step(int rank, const protocol::Step& s);
  void sample(int rank, int64_t t_us, const protocol::GpuSample& g);
  void message(int rank, int64_t t_us, const char* kind, const std::string& tag,
               const std::string& text, const nlohmann::json* details);
  void done(int rank, const protocol::Done& d);
  void probe(int rank, const protocol::LinkProbe& p);
  void run_id(const std::string& id);
  void store_problem(const protocol::ReadProblem& problem);

  SQLite::Database& m_db;
  int64_t m_trial_id;
  bool m_run_id_set = false;
  std::set<std::pair<int, int64_t>> m_steps_seen;  // (rank, step index)
  int64_t m_problems_kept = 0;
  int64_t m_problems_omitted = 0;
  int64_t m_last_problem_line = 0;
  std::unique_ptr<SQLite::Statement> m_hello, m_topology, m_model, m_step, m_step_gpu, m_interval, m_sample, m_message,
      m_done, m_problem, m_run_id, m_probe, m_step_memory, m_memory_timeline, m_counters;
  std::map<int, int> m_probe_count;  // next link_probes idx per rank
};

}  // namespace tunebench::store
