#include "ui/runner/replay_source.h"

#include <algorithm>

#include <QFile>
#include <QFileInfo>
#include <QTimer>

#include "core/protocol/event_reader.h"

namespace tunebench::ui {

namespace {
struct Collector final : protocol::ReadListener {
  EventBatch events;
  int problems = 0;
  void on_event(protocol::Event&& e) override { events.push_back(std::move(e)); }
  void on_problem(const protocol::ReadProblem&) override { ++problems; }
};
}  // namespace

ReplaySource::ReplaySource(QObject* parent) : LiveSource(parent), m_timer(new QTimer(this)) {
  m_timer->setInterval(kTickMs);
  connect(m_timer, &QTimer::timeout, this, &ReplaySource::tick);
}

ReplaySource::~ReplaySource() = default;

bool ReplaySource::load(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    m_error = QStringLiteral("cannot open %1: %2").arg(path, file.errorString());
    return false;
  }
  Collector collector;
  protocol::EventReader reader(collector);
  while (!file.atEnd()) {
    const QByteArray chunk = file.read(1 << 16);
    reader.feed(std::string_view(chunk.constData(), size_t(chunk.size())));
  }
  reader.finish();
  if (collector.events.empty()) {
    m_error = QStringLiteral("%1 holds no events (%2 unreadable lines)").arg(path).arg(collector.problems);
    return false;
  }
  const QString id = QString::fromStdString(collector.events.front().header.trial);
  setEvents(std::move(collector.events), id.isEmpty() ? QFileInfo(path).completeBaseName() : id);
  return true;
}

void ReplaySource::setEvents(EventBatch events, const QString& trialId) {
  // Ranks were recorded interleaved in arrival order; replay in time order (stable: a rank's own
  // order is kept for equal stamps).
  std::stable_sort(events.begin(), events.end(),
                   [](const protocol::Event& a, const protocol::Event& b) { return a.header.t_us < b.header.t_us; });
  m_events = std::move(events);
  m_trialId = trialId;
  m_worldSize = 1;
  m_steps = 0;
  for (const auto& e : m_events) {
    m_worldSize = std::max(m_worldSize, e.header.rank + 1);
    if (e.is<protocol::Hello>()) {
      const auto& cfg = e.as<protocol::Hello>().config;
      if (cfg.contains("steps") && cfg["steps"].is_number_integer()) m_steps = cfg["steps"].get<int>();
    }
    if (e.is<protocol::Step>()) m_steps = std::max(m_steps, int(e.as<protocol::Step>().step + 1));
  }
}

void ReplaySource::start(double speed) {
  if (m_active || m_events.empty()) return;
  m_speed = speed;
  m_next = 0;
  m_lastStep = -1;
  m_active = true;
  m_clock.start();
  emit started(m_trialId);
  emit logLine({-1, LogLine::Source::Runner,
                QStringLiteral("replaying %1 events of %2 rank(s) at %3")
                    .arg(m_events.size())
                    .arg(m_worldSize)
                    .arg(speed > 0 ? QStringLiteral("%1x").arg(speed) : QStringLiteral("full speed"))});
  m_timer->start();
  tick();
}

void ReplaySource::tick() {
  if (!m_active) return;
  const int64_t t0 = m_events.front().header.t_us;
  EventBatch batch;
  if (m_speed > 0) {
    const int64_t until = t0 + int64_t(double(m_clock.nsecsElapsed()) / 1000.0 * m_speed);
    while (m_next < m_events.size() && m_events[m_next].header.t_us <= until) batch.push_back(m_events[m_next++]);
  } else {
    while (m_next < m_events.size() && batch.size() < kMaxEventsPerTickUnpaced) batch.push_back(m_events[m_next++]);
  }
  if (!batch.empty()) {
    for (const auto& e : batch)
      if (e.is<protocol::Step>() && e.header.rank == 0) m_lastStep = int(e.as<protocol::Step>().step);
    emit eventsArrived(batch);
    const double recorded = double(batch.back().header.t_us - t0) / 1e6;
    const double total = double(m_events.back().header.t_us - t0) / 1e6;
    TrialProgress p{m_trialId, m_lastStep + 1, m_steps, recorded, -1.0};
    if (m_speed > 0) p.eta_s = (total - recorded) / m_speed;
    emit progress(p);
  }
  if (m_next >= m_events.size()) finish(protocol::TrialStatus::Done, {});
}

void ReplaySource::stop() {
  if (m_active) finish(protocol::TrialStatus::Stopped, QStringLiteral("replay stopped by the user"));
}

void ReplaySource::finish(protocol::TrialStatus status, const QString& reason) {
  m_timer->stop();
  m_active = false;
  TrialOutcome outcome;
  outcome.trial_id = m_trialId;
  outcome.status = status;
  outcome.exit_code = status == protocol::TrialStatus::Stopped ? 130 : 0;
  outcome.reason = reason;
  emit finished(outcome);
}

}  // namespace tunebench::ui
