// TrialLogCache: the events of every trial run or replayed in this GUI session, as TrialLogs, so a
// finished trial can be compared without re-reading anything. Plain data keyed by trial id (the
// TrialsModel's TrialIdRole); the window feeds it from the same batches the live view gets.
#pragma once

#include <map>
#include <optional>

#include <QString>

#include "core/protocol/trial_log.h"
#include "ui/runner/runner_types.h"

namespace tunebench::ui {

class TrialLogCache {
 public:
  void add(const QString& trialId, const EventBatch& batch);
  void insert(const QString& trialId, protocol::TrialLog log);
  void remove(const QString& trialId);
  void clear();

  bool contains(const QString& trialId) const;
  // A copy: the caller may run the analysis while the cache keeps growing.
  std::optional<protocol::TrialLog> log(const QString& trialId) const;
  size_t size() const { return m_logs.size(); }

 private:
  std::map<QString, protocol::TrialLog> m_logs;
};

}  // namespace tunebench::ui
