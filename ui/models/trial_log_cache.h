// TrialLogCache: the events of trials this GUI session has but the session file does not (yet):
// the running trial and replays, as TrialLogs keyed by trial id (the TrialsModel's TrialIdRole),
// so they can be drawn again and compared without re-reading anything.
//
// Bounded: it holds at most kBudget records (events plus their intervals, about 100 bytes each
// in memory), dropping the least recently used trials first. A pinned trial (the one running) is
// never dropped. The window removes a trial once it is in the session file, from where it loads.
#pragma once

#include <list>
#include <map>
#include <optional>
#include <set>

#include <QString>

#include "core/protocol/trial_log.h"
#include "ui/runner/runner_types.h"

namespace tunebench::ui {

class TrialLogCache {
 public:
  static constexpr size_t kBudget = 4'000'000;

  explicit TrialLogCache(size_t budget = kBudget) : m_budget(budget) {}

  void add(const QString& trialId, const EventBatch& batch);
  void insert(const QString& trialId, protocol::TrialLog log);
  void remove(const QString& trialId);
  void clear();
  // A pinned trial stays whatever the budget (the running trial); unpin when it ends.
  void pin(const QString& trialId) { m_pinned.insert(trialId); }
  void unpin(const QString& trialId) { m_pinned.erase(trialId); }

  bool contains(const QString& trialId) const;
  // A copy: the caller may run the analysis while the cache keeps growing.
  std::optional<protocol::TrialLog> log(const QString& trialId) const;
  size_t size() const { return m_logs.size(); }
  size_t records() const { return m_records; }  // events + intervals held

 private:
  struct Entry {
    protocol::TrialLog log;
    size_t records = 0;
  };
  void touch(const QString& trialId);
  void evict();

  std::map<QString, Entry> m_logs;
  std::list<QString> m_order;  // least recently used first
  std::set<QString> m_pinned;
  size_t m_records = 0;
  size_t m_budget;
};

}  // namespace tunebench::ui
