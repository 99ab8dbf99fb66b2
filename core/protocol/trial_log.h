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
  std::vector<Step> steps;  // in arrival order (= step order per rank), each step index once
  std::vector<Timed<GpuSample>> samples;
  std::vector<Timed<Log>> logs;
  std::vector<Timed<Warning>> warnings;
  std::vector<Timed<Error>> errors;
  std::optional<Done> done;
  std::vector<LinkProbe> probes;  // a link probe's points, in arrival order
};

struct TrialLog {
  // A log of two million garbage lines must not become two million rows: the first problems are
  // kept for the log pane, the rest only counted.
  static constexpr size_t kMaxKeptProblems = 1000;

  std::string trial;  // trial id from the events (first one seen)
  std::map<int, RankLog> ranks;
  std::vector<ReadProblem> problems;  // the first kMaxKeptProblems lines that were not events
  int64_t problem_count = 0;          // all of them (newer-version notices are not problems)

  // Adds an event. A step whose index its rank already sent is not added: it becomes a
  // DuplicateStep problem (the first copy is kept).
  void add(const Event& event);
  // Keeps the problem while fewer than kMaxKeptProblems are kept; counts it unless it is a notice.
  void add_problem(const ReadProblem& problem);
  int world_size() const;  // from hello, else the number of ranks seen
  // A trial's step count wherever it is shown (the table, the title, the status bar, `list`,
  // `import`): the most steps any rank recorded, warm-up included. Never step records over all
  // ranks (an 8-step DDP trial has 16), nor records divided by a world size whose ranks were not
  // all imported.
  int64_t steps_per_rank() const;
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
  void on_problem(const ReadProblem& problem) override { m_log.add_problem(problem); }

 private:
  TrialLog& m_log;
};

// A ReadListener that routes events to one TrialLog per trial id, in order of first appearance:
// a file holding two runs (concatenated or interleaved) gives two trials. Lines that are not
// events belong to no trial; they go to the first.
class TrialSplitter final : public ReadListener {
 public:
  void on_event(Event&& event) override;
  void on_problem(const ReadProblem& problem) override { m_problems.add_problem(problem); }
  std::vector<TrialLog> take();

 private:
  std::map<std::string, TrialLog> m_logs;
  std::vector<std::string> m_order;
  TrialLog m_problems;  // holds only problems until take()
};

// Reads a whole .jsonl file into one TrialLog per trial id (at least one, possibly without
// events). Throws std::runtime_error when the file cannot be opened or read.
std::vector<TrialLog> read_trial_logs_file(const std::string& path);
// The same for a file known to hold one trial: every event goes into one TrialLog.
TrialLog read_trial_log_file(const std::string& path);

}  // namespace tunebench::protocol
