// TrialWriter: writes a live trial's events into its session as they arrive.
//
// Events are buffered and committed in batches: when max_batch_events are pending, or when the
// oldest pending event is flush_interval old. A background thread enforces the interval even when
// no new event arrives, so a writer killed with SIGKILL loses at most about flush_interval of
// events; everything committed before is complete (each batch is one transaction).
//
// The writer opens its own connection to the session file, so it can live on its own thread
// while the GUI's SessionStore reads the same file. It implements protocol::ReadListener, so it
// can sit directly behind an EventReader. All public methods are thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "core/protocol/event_reader.h"
#include "core/store/records.h"

namespace tunebench::store {

class EventInserter;
class SessionStore;

class TrialWriter final : public protocol::ReadListener {
 public:
  struct Options {
    std::chrono::milliseconds flush_interval{500};
    size_t max_batch_events = 4096;
    bool background_flush = true;  // off: flushing happens only inside add() and flush()
  };

  // Marks trial `trial_id` of the session at `session_path` running, owned by this process.
  // Throws StoreError.
  TrialWriter(const std::string& session_path, int64_t trial_id);
  TrialWriter(const std::string& session_path, int64_t trial_id, Options options);
  // Flushes; a trial not finished by then is marked interrupted (its writer went away).
  ~TrialWriter() override;
  TrialWriter(const TrialWriter&) = delete;
  TrialWriter& operator=(const TrialWriter&) = delete;

  void add(const protocol::Event& event);
  void add_problem(const protocol::ReadProblem& problem);
  void on_event(protocol::Event&& event) override { add(event); }
  void on_problem(const protocol::ReadProblem& problem) override { add_problem(problem); }

  // Commits everything pending now. Throws StoreError when the batch cannot be written.
  void flush();
  // Flushes, then sets the final status (Done, Failed, Stopped, Interrupted) and exit reason.
  void finish(TrialStatus status, const std::string& exit_reason = "");

  int64_t trial_id() const { return m_trial_id; }
  // Events (and problems) committed so far: all of them survive a crash of this process.
  int64_t committed() const;
  // The last background flush error, empty if none (the background thread cannot throw).
  std::string last_error() const;

 private:
  using Pending = std::variant<protocol::Event, protocol::ReadProblem>;
  void enqueue(Pending item);
  void flush_locked();
  void background_loop();

  Options m_options;
  int64_t m_trial_id;
  std::unique_ptr<SessionStore> m_store;
  std::unique_ptr<EventInserter> m_inserter;

  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::vector<Pending> m_pending;
  std::chrono::steady_clock::time_point m_oldest_pending;
  int64_t m_committed = 0;
  bool m_finished = false;
  bool m_stopping = false;
  std::string m_last_error;
  std::thread m_thread;
};

}  // namespace tunebench::store
