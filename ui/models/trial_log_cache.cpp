#include "ui/models/trial_log_cache.h"

#include <algorithm>

namespace tunebench::ui {

namespace {
size_t weight(const protocol::Event& e) {
  return 1 + (e.is<protocol::Step>() ? e.as<protocol::Step>().intervals.size() : 0);
}

size_t weight(const protocol::TrialLog& log) {
  size_t n = 0;
  for (const auto& [rank, r] : log.ranks) {
    n += r.samples.size() + r.logs.size() + r.warnings.size() + r.errors.size() + 3;
    for (const auto& s : r.steps) n += 1 + s.intervals.size();
  }
  return n;
}
}  // namespace

void TrialLogCache::touch(const QString& trialId) {
  m_order.remove(trialId);
  m_order.push_back(trialId);
}

void TrialLogCache::evict() {
  for (auto it = m_order.begin(); m_records > m_budget && it != m_order.end();) {
    if (m_pinned.count(*it) || std::next(it) == m_order.end()) {  // the newest stays too
      ++it;
      continue;
    }
    const auto entry = m_logs.find(*it);
    if (entry != m_logs.end()) {
      m_records -= entry->second.records;
      m_logs.erase(entry);
    }
    it = m_order.erase(it);
  }
}

void TrialLogCache::add(const QString& trialId, const EventBatch& batch) {
  if (trialId.isEmpty()) return;
  Entry& entry = m_logs[trialId];
  for (const protocol::Event& e : batch) {
    entry.log.add(e);
    const size_t w = weight(e);
    entry.records += w;
    m_records += w;
  }
  if (m_order.empty() || m_order.back() != trialId) touch(trialId);
  evict();
}

void TrialLogCache::insert(const QString& trialId, protocol::TrialLog log) {
  remove(trialId);
  Entry& entry = m_logs[trialId];
  entry.records = weight(log);
  entry.log = std::move(log);
  m_records += entry.records;
  touch(trialId);
  evict();
}

void TrialLogCache::remove(const QString& trialId) {
  const auto it = m_logs.find(trialId);
  if (it == m_logs.end()) return;
  m_records -= it->second.records;
  m_logs.erase(it);
  m_order.remove(trialId);
}

void TrialLogCache::clear() {
  m_logs.clear();
  m_order.clear();
  m_records = 0;
}

bool TrialLogCache::contains(const QString& trialId) const { return m_logs.count(trialId) > 0; }

std::optional<protocol::TrialLog> TrialLogCache::log(const QString& trialId) const {
  const auto it = m_logs.find(trialId);
  if (it == m_logs.end()) return std::nullopt;
  return it->second.log;
}

}  // namespace tunebench::ui
