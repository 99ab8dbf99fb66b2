#include "core/store/trial_writer.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/protocol/events.h"
#include "core/store/event_inserter.h"
#include "core/store/process_identity.h"
#include "core/store/session_store.h"
#include "core/store/connection.h"
#include "core/store/store_error.h"

namespace tunebench::store {

TrialWriter::TrialWriter(const std::string& session_path, int64_t trial_id)
    : TrialWriter(session_path, trial_id, Options{}) {}

TrialWriter::TrialWriter(const std::string& session_path, int64_t trial_id, Options options)
    : m_options(options), m_trial_id(trial_id) {
  SessionStore::OpenOptions open;
  open.check_integrity = false;  // the GUI's own store has just checked (or created) this file
  m_store = std::make_unique<SessionStore>(SessionStore::open(session_path, open));
  m_store->trial(trial_id);  // throws when missing
  m_store->prepare_for_writing();
  try {
    SQLite::Statement q(m_store->database(),
        "UPDATE trials SET status = 'running', owner = ?, exit_reason = '', "
        "start_us = coalesce(start_us, ?), end_us = NULL WHERE id = ?");
    q.bind(1, current_owner_token());
    q.bind(2, protocol::now_us());
    q.bind(3, trial_id);
    q.exec();
    m_inserter = std::make_unique<EventInserter>(m_store->database(), trial_id);
  } catch (const SQLite::Exception& e) {
    throw sqlite_failure(session_path + ": cannot start writing the trial", e);
  }
  if (m_options.background_flush) m_thread = std::thread([this] { background_loop(); });
}

TrialWriter::~TrialWriter() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
  try {
    if (!m_finished) finish(TrialStatus::Interrupted, "the writer was closed before the trial finished");
  } catch (...) {
    // A destructor cannot report; the next open marks the trial interrupted anyway.
  }
}

void TrialWriter::add(const protocol::Event& event) { enqueue(event); }
void TrialWriter::add_problem(const protocol::ReadProblem& problem) { enqueue(problem); }

void TrialWriter::enqueue(Pending item) {
  std::unique_lock<std::mutex> lock(m_mutex);
  if (m_finished) throw StoreError("trial " + std::to_string(m_trial_id) + " is already finished");
  if (m_pending.empty()) m_oldest_pending = std::chrono::steady_clock::now();
  m_pending.push_back(std::move(item));
  const bool full = m_pending.size() >= m_options.max_batch_events;
  const bool due = std::chrono::steady_clock::now() - m_oldest_pending >= m_options.flush_interval;
  if (full || due) flush_locked();
}

void TrialWriter::flush() {
  std::lock_guard<std::mutex> lock(m_mutex);
  flush_locked();
}

void TrialWriter::flush_locked() {
  if (m_pending.empty()) return;
  try {
    SQLite::Transaction tx(m_store->database());
    for (const auto& item : m_pending) {
      if (const auto* e = std::get_if<protocol::Event>(&item)) m_inserter->insert(*e);
      else m_inserter->insert_problem(std::get<protocol::ReadProblem>(item));
    }
    tx.commit();
  } catch (const SQLite::Exception& e) {
    // The batch stays pending: a busy or full disk may clear, and the next flush retries it.
    throw sqlite_failure(m_store->path() + ": cannot write trial " + std::to_string(m_trial_id), e);
  }
  m_committed += static_cast<int64_t>(m_pending.size());
  m_pending.clear();
}

void TrialWriter::finish(TrialStatus status, const std::string& exit_reason) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_finished) return;
  flush_locked();
  try {
    SQLite::Transaction tx(m_store->database());
    m_inserter->finish();  // the count of problems beyond the kept ones
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw sqlite_failure(m_store->path() + ": cannot write trial " + std::to_string(m_trial_id), e);
  }
  m_store->set_trial_status(m_trial_id, status, exit_reason);
  m_finished = true;
}

int64_t TrialWriter::committed() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_committed;
}

std::string TrialWriter::last_error() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_last_error;
}

void TrialWriter::background_loop() {
  std::unique_lock<std::mutex> lock(m_mutex);
  while (!m_stopping) {
    // Wake at the moment the oldest pending event becomes due (or after one interval when idle).
    const auto deadline = m_pending.empty()
                              ? std::chrono::steady_clock::now() + m_options.flush_interval
                              : m_oldest_pending + m_options.flush_interval;
    m_wake.wait_until(lock, deadline, [this] { return m_stopping; });
    if (m_stopping || m_finished) continue;
    if (!m_pending.empty() &&
        std::chrono::steady_clock::now() - m_oldest_pending >= m_options.flush_interval) {
      try {
        flush_locked();
        m_last_error.clear();
      } catch (const StoreError& e) {
        m_last_error = e.what();
      }
    }
  }
}

}  // namespace tunebench::store
