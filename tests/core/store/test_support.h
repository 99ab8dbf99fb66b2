// Helpers shared by the store tests: a temporary directory, complete synthetic trials with every
// record type, a canonical JSON view of a TrialLog for equality checks, and file fingerprints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/protocol/events.h"
#include "core/protocol/trial_log.h"

namespace tunebench::store::test {

// A fresh directory under the system temp dir, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  std::string file(const std::string& name) const { return m_path + "/" + name; }
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

protocol::Event hello_event(int rank, int world_size);
protocol::Event model_event(int rank);
// A step with intervals on all three lanes (forward, backward, two all-reduce buckets, data wait).
protocol::Event step_event(int rank, int64_t step, const std::string& trial = "run-1");
protocol::Event gpu_event(int rank, int64_t t_us, bool with_optionals);
protocol::Event log_event(int rank, const std::string& message);
protocol::Event warning_event(int rank);
protocol::Event error_event(int rank);
protocol::Event done_event(int rank);

// Every record type for `ranks` ranks with `steps` steps each, in a plausible arrival order.
std::vector<protocol::Event> full_trial(int ranks, int steps);

// The log as JSON with every field of every record (events re-encoded by protocol::to_json), so
// two logs compare equal exactly when all their records do.
nlohmann::json canonical(const protocol::TrialLog& log);
protocol::TrialLog log_of(const std::vector<protocol::Event>& events);

std::string read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);
void copy_file(const std::string& from, const std::string& to);
// Runs SQL on a file with a plain (not hardened) connection: how the tests plant hostile content.
void raw_exec(const std::string& path, const std::string& sql);

}  // namespace tunebench::store::test
