// TrialLog: every event of one trial, grouped by rank. The common currency between the reader
// (live runs, imported .jsonl files), the session store and the analysis.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/event_reader.h"
#include "core/protocol/events.h"

namespace tunebench::protocol {

template <class T> struct Timed {
  int64_t t_us = 0;
  T value;
};

struct RankLog {
  std::optional<Hello> hello;
  std::optional<ModelInfo> model;
  std::vector<Step> steps;  // in arrival order (= step order per rank)
  std::vector<Timed<GpuSample>> samples;
  std::vector<Timed<Log>> logs;
  std::vector<Timed<Warning>> warnings;
  std::vector<Timed<Error>> errors;
  std::optional<Done> done;
  std::vector<LinkProbe> probes;  // a link probe's points, in arrival order
};

struct TrialLog {
  std::string trial;  // trial id from the events (first one seen)
  std::map<int, RankLog> ranks;
  std::vector<ReadProblem> problems;  // lines that were not events, kept for the log pane

  void add(const Event& event);
  int world_size() const;  // from hello, else the number of ranks seen
  // The config JSON from rank 0's hello (or the lowest rank's), null if none arrived.
  nlohmann::json config() const;
  // Steps of every rank with index >= warm-up, i.e. not flagged warmup.
  std::vector<const Step*> measured_steps(int rank) const;
};

// A ReadListener that fills a TrialLog (for files, sockets and tests).
class TrialLogBuilder final : public ReadListener {
 public:
  explicit TrialLogBuilder(TrialLog& log) : m_log(log) {}
  void on_event(Event&& event) override { m_log.add(event); }
  void on_problem(const ReadProblem& problem) override { m_log.problems.push_back(problem); }

 private:
  TrialLog& m_log;
};

// Reads a whole .jsonl file. Throws std::runtime_error when the file cannot be opened; bad lines
// end up in TrialLog::problems.
TrialLog read_trial_log_file(const std::string& path);

}  // namespace tunebench::protocol
