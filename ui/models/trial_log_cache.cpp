#include "ui/models/trial_log_cache.h"

namespace tunebench::ui {

void TrialLogCache::add(const QString& trialId, const EventBatch& batch) {
  if (trialId.isEmpty()) return;
  protocol::TrialLog& log = m_logs[trialId];
  for (const protocol::Event& e : batch) log.add(e);
}

void TrialLogCache::insert(const QString& trialId, protocol::TrialLog log) { m_logs[trialId] = std::move(log); }

void TrialLogCache::remove(const QString& trialId) { m_logs.erase(trialId); }

void TrialLogCache::clear() { m_logs.clear(); }

bool TrialLogCache::contains(const QString& trialId) const { return m_logs.count(trialId) > 0; }

std::optional<protocol::TrialLog> TrialLogCache::log(const QString& trialId) const {
  const auto it = m_logs.find(trialId);
  if (it == m_logs.end()) return std::nullopt;
  return it->second;
}

}  // namespace tunebench::ui
