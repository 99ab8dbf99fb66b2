#include "ui/runner/trial_runner.h"

#include <algorithm>
#include <csignal>
#include <deque>

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>

#include "ui/runner/event_channel.h"
#include "ui/runner/exit_reason.h"
#include "ui/runner/process_group.h"
#include "ui/runner/worker_launch.h"

namespace tunebench::ui {

namespace {
constexpr int kStderrTailLines = 20;
constexpr int kDrainMs = 1000;
}  // namespace

// One rank of the current trial. It owns its QProcess: when the next trial starts (or the runner
// goes), the process is disconnected and deleted, so no signal of an old process can reach a
// Rank that no longer exists (deleteLater: start() may run inside that process's own signal).
struct TrialRunner::Rank {
  ~Rank() {
    if (!process) return;
    process->disconnect();
    process->deleteLater();
  }
  int rank = 0;
  QProcess* process = nullptr;
  qint64 pid = 0;
  bool running = false;
  bool sawEvent = false;
  int lastStep = -1;
  QByteArray partial[2];  // stdout, stderr: bytes after the last newline
  std::deque<QString> stderrTail;
  QString errorKind, errorMessage;  // from the rank's last `error` event
};

TrialRunner::TrialRunner(QObject* parent)
    : LiveSource(parent), m_watchdog(new QTimer(this)), m_killTimer(new QTimer(this)), m_drainTimer(new QTimer(this)) {
  m_watchdog->setInterval(250);
  connect(m_watchdog, &QTimer::timeout, this, &TrialRunner::checkForHang);
  m_killTimer->setSingleShot(true);
  connect(m_killTimer, &QTimer::timeout, this, &TrialRunner::killAll);
  m_drainTimer->setSingleShot(true);
  m_drainTimer->setInterval(kDrainMs);
  connect(m_drainTimer, &QTimer::timeout, this, &TrialRunner::emitFinished);
}

TrialRunner::~TrialRunner() {
  for (auto& r : m_ranks)
    if (r->running) {
      r->process->disconnect(this);
      signal_process_group(r->pid, SIGKILL);
      r->process->waitForFinished(2000);
    }
  m_ranks.clear();  // the processes are children: Qt deletes what deleteLater has not yet
}

bool TrialRunner::start(const TrialRequest& request) {
  if (m_active) return false;
  m_request = request;
  m_outcome = TrialOutcome{request.id, TrialOutcome::Status::Succeeded, {}, {}, -1};
  m_ranks.clear();
  m_stopping = m_finishing = false;
  m_firstStepSeen = -1;
  m_active = true;
  m_clock.start();
  emit started(request.id);

  auto refuse = [&](const QString& reason) {
    m_outcome.status = TrialOutcome::Status::Failed;
    m_outcome.reason = reason;
    emitFinished();
    return false;
  };
  const auto problems = config::validate(request.config);
  if (!problems.empty())
    return refuse(QStringLiteral("invalid configuration: ") +
                  QString::fromStdString(config::describe(problems)).trimmed());

  m_dir = std::make_unique<QTemporaryDir>();
  if (!m_dir->isValid()) return refuse(QStringLiteral("cannot create a temporary directory: ") + m_dir->errorString());
  const QString configPath = m_dir->filePath(QStringLiteral("trial.json"));
  QFile file(configPath);
  if (!file.open(QIODevice::WriteOnly) ||
      file.write(QByteArray::fromStdString(config::to_json(request.config).dump(2))) < 0)
    return refuse(QStringLiteral("cannot write %1: %2").arg(configPath, file.errorString()));
  file.close();

  if (m_channel) m_channel->deleteLater();  // we may be inside one of its signals
  m_channel = new EventChannel(this);
  connect(m_channel, &EventChannel::eventsArrived, this, &TrialRunner::onEvents);
  connect(m_channel, &EventChannel::logLine, this, &LiveSource::logLine);
  connect(m_channel, &EventChannel::connectionClosed, this, [this] {
    if (m_drainTimer->isActive() && m_channel->openConnections() == 0) emitFinished();
  });
  if (!m_channel->listen(m_dir->filePath(QStringLiteral("events.sock"))))
    return refuse(QStringLiteral("cannot open the event channel: ") + m_channel->errorString());

  const quint16 port = pick_free_port();
  if (port == 0) return refuse(QStringLiteral("no free TCP port on 127.0.0.1 for the rendezvous"));
  const QString program = request.worker_program.isEmpty() ? find_worker_program(QCoreApplication::applicationDirPath())
                                                           : request.worker_program;
  m_request.worker_program = program;
  emit logLine({-1, LogLine::Source::Runner,
                QStringLiteral("starting %1 rank(s): %2 %3 (MASTER_PORT=%4)")
                    .arg(request.config.world_size)
                    .arg(program, worker_arguments(configPath, m_channel->spec(), request.id).join(' '))
                    .arg(port)});
  for (int rank = 0; rank < request.config.world_size && !m_stopping; ++rank)
    startRank(rank, port, configPath, m_channel->spec());
  m_watchdog->start();
  return m_active;
}

void TrialRunner::startRank(int rank, quint16 masterPort, const QString& configPath, const QString& eventsSpec) {
  auto r = std::make_unique<Rank>();
  r->rank = rank;
  r->process = new QProcess(this);
  QProcess* p = r->process;
  p->setProgram(m_request.worker_program);
  p->setArguments(worker_arguments(configPath, eventsSpec, m_request.id));
  p->setProcessEnvironment(
      worker_environment(QProcessEnvironment::systemEnvironment(), m_request.config, rank, masterPort, m_request.id));
  run_in_own_process_group(*p);
  Rank* raw = r.get();
  // `raw` lives exactly as long as these connections: ~Rank disconnects the process first.
  connect(p, &QProcess::readyReadStandardOutput, this, [this, raw] { readOutput(*raw, false, false); });
  connect(p, &QProcess::readyReadStandardError, this, [this, raw] { readOutput(*raw, true, false); });
  connect(p, &QProcess::finished, this, [this, rank](int code, QProcess::ExitStatus status) {
    onRankFinished(rank, code, status == QProcess::CrashExit);
  });
  connect(p, &QProcess::errorOccurred, this, [this, rank](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart) onRankStartFailed(rank);
  });
  m_ranks.push_back(std::move(r));
  raw->running = true;
  p->start();
  raw->pid = p->processId();
}

void TrialRunner::readOutput(Rank& r, bool stderrStream, bool flushPartial) {
  QByteArray& buf = r.partial[stderrStream ? 1 : 0];
  buf += stderrStream ? r.process->readAllStandardError() : r.process->readAllStandardOutput();
  int start = 0;
  auto emitLine = [&](QByteArray bytes) {
    if (bytes.endsWith('\r')) bytes.chop(1);
    const QString text = QString::fromUtf8(bytes);
    if (stderrStream) {
      r.stderrTail.push_back(text);
      if (r.stderrTail.size() > kStderrTailLines) r.stderrTail.pop_front();
    }
    emit logLine({r.rank, stderrStream ? LogLine::Source::Stderr : LogLine::Source::Stdout, text});
  };
  for (int nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n', start)) {
    emitLine(buf.mid(start, nl - start));
    start = nl + 1;
  }
  buf.remove(0, start);
  if (flushPartial && !buf.isEmpty()) {
    emitLine(buf);
    buf.clear();
  }
}

void TrialRunner::onRankStartFailed(int rank) {
  Rank& r = *m_ranks[size_t(rank)];
  if (!r.running) return;
  r.running = false;
  fail(rank, QStringLiteral("rank %1 could not start %2: %3")
                 .arg(rank)
                 .arg(m_request.worker_program, r.process->errorString()));
  maybeFinish();
}

void TrialRunner::onRankFinished(int rank, int exitCode, bool crashed) {
  Rank& r = *m_ranks[size_t(rank)];
  if (!r.running) return;
  r.running = false;
  readOutput(r, false, true);
  readOutput(r, true, true);
  QString how = crashed ? describe_signal(exitCode) : describe_exit_code(exitCode);
  // Our own SIGTERM/SIGKILL is not "terminated from outside": say who stopped the rank and why.
  if (m_stopping && crashed && (exitCode == SIGTERM || exitCode == SIGKILL)) {
    const QString sig =
        exitCode == SIGTERM ? QStringLiteral("SIGTERM") : QStringLiteral("SIGKILL after ignoring SIGTERM");
    if (m_outcome.status == TrialOutcome::Status::Stopped)
      how = QStringLiteral("stopped by the user (%1)").arg(sig);
    else if (m_outcome.status == TrialOutcome::Status::Failed && m_outcome.failed_rank != rank)
      how = QStringLiteral("stopped because rank %1 failed (%2)").arg(m_outcome.failed_rank).arg(sig);
  }
  emit logLine({rank, LogLine::Source::Runner, QStringLiteral("rank %1 %2").arg(rank).arg(how)});
  if ((crashed || exitCode != 0) && !m_stopping) fail(rank, QStringLiteral("rank %1 failed: %2").arg(rank).arg(how));
  maybeFinish();
}

void TrialRunner::fail(int rank, const QString& reason) {
  if (m_outcome.status == TrialOutcome::Status::Succeeded) {
    m_outcome.status = TrialOutcome::Status::Failed;
    m_outcome.reason = reason;
    m_outcome.failed_rank = rank;
  }
  terminateAll();
}

void TrialRunner::stop() {
  if (!m_active || m_finishing) return;
  if (m_outcome.status == TrialOutcome::Status::Succeeded) {
    m_outcome.status = TrialOutcome::Status::Stopped;
    m_outcome.reason = QStringLiteral("stopped by the user");
  }
  terminateAll();
}

void TrialRunner::stopAndWait() {
  stop();
  QDeadlineTimer deadline(m_graceMs + 3000);
  for (auto& r : m_ranks) {
    if (!r->running) continue;
    if (!r->process->waitForFinished(int(std::max<qint64>(1, deadline.remainingTime() - 2000)))) {
      signal_process_group(r->pid, SIGKILL);
      r->process->waitForFinished(2000);
    }
  }
  if (m_active) emitFinished();
}

void TrialRunner::terminateAll() {
  if (m_stopping) return;
  m_stopping = true;
  for (auto& r : m_ranks)
    if (r->running) signal_process_group(r->pid, SIGTERM);
  m_killTimer->start(m_graceMs);
}

void TrialRunner::killAll() {
  for (auto& r : m_ranks)
    if (r->running) {
      emit logLine({r->rank, LogLine::Source::Runner,
                    QStringLiteral("rank %1 ignored SIGTERM for %2 ms: sending SIGKILL").arg(r->rank).arg(m_graceMs)});
      signal_process_group(r->pid, SIGKILL);
    }
}

void TrialRunner::checkForHang() {
  if (m_stopping) return;
  const auto& c = m_request.config;
  for (auto& r : m_ranks) {
    if (!r->running) continue;
    const qint64 silence = m_channel->silenceMs(r->rank);
    if (silence >= 0) {
      if (silence > qint64(c.collective_timeout_s * 1000)) {
        fail(r->rank,
             QStringLiteral("rank %1 hung: no events for %2 s (collective timeout %3 s); the trial was stopped")
                 .arg(r->rank)
                 .arg(silence / 1000.0, 0, 'f', 1)
                 .arg(c.collective_timeout_s));
        return;
      }
    } else if (m_clock.elapsed() > qint64(c.rendezvous_timeout_s * 1000) + m_startupAllowanceMs) {
      fail(r->rank,
           QStringLiteral(
               "rank %1 sent no event within %2 s of starting (rendezvous timeout %3 s); the trial was stopped")
               .arg(r->rank)
               .arg(m_clock.elapsed() / 1000.0, 0, 'f', 1)
               .arg(c.rendezvous_timeout_s));
      return;
    }
  }
}

void TrialRunner::onEvents(const EventBatch& batch) {
  for (const auto& e : batch) {
    const int rank = e.header.rank;
    if (rank < 0 || size_t(rank) >= m_ranks.size()) continue;
    Rank& r = *m_ranks[size_t(rank)];
    r.sawEvent = true;
    if (e.is<protocol::Step>()) {
      r.lastStep = int(std::max<int64_t>(r.lastStep, e.as<protocol::Step>().step));
    } else if (e.is<protocol::Error>()) {
      r.errorKind = QString::fromStdString(e.as<protocol::Error>().kind);
      r.errorMessage = QString::fromStdString(e.as<protocol::Error>().message);
      emit logLine({rank, LogLine::Source::Event,
                    QStringLiteral("error (%1): %2").arg(describe_error_kind(r.errorKind), r.errorMessage)});
    } else if (e.is<protocol::Warning>()) {
      emit logLine({rank, LogLine::Source::Event,
                    QStringLiteral("warning: ") + QString::fromStdString(e.as<protocol::Warning>().message)});
    } else if (e.is<protocol::Log>()) {
      emit logLine({rank, LogLine::Source::Event, QString::fromStdString(e.as<protocol::Log>().message)});
    }
  }
  emit eventsArrived(batch);

  // Progress: the step every rank has completed (ranks move in lock step under DDP/FSDP).
  int done = INT32_MAX;
  for (const auto& r : m_ranks) done = std::min(done, r->lastStep + 1);
  if (m_ranks.empty()) done = 0;
  const double elapsed = m_clock.elapsed() / 1000.0;
  TrialProgress p{m_request.id, done, int(m_request.config.steps), elapsed, -1.0};
  if (done > 0 && m_firstStepSeen < 0) {
    m_firstStepSeen = done;
    m_firstStepElapsed = elapsed;
  }
  if (m_firstStepSeen >= 0 && done > m_firstStepSeen) {
    const double perStep = (elapsed - m_firstStepElapsed) / (done - m_firstStepSeen);
    p.eta_s = perStep * std::max(0, p.steps - done);
  }
  emit progress(p);
}

QString TrialRunner::errorEventText(const Rank& r) const {
  if (r.errorMessage.isEmpty()) return {};
  return QStringLiteral("%1: %2").arg(describe_error_kind(r.errorKind), r.errorMessage);
}

void TrialRunner::maybeFinish() {
  for (const auto& r : m_ranks)
    if (r->running) return;
  m_killTimer->stop();
  m_watchdog->stop();
  if (m_finishing) return;
  m_finishing = true;
  // The processes are gone but their sockets may still hold the last lines (often the error event
  // that explains the exit): wait until every connection closed, at most kDrainMs.
  if (m_channel && m_channel->openConnections() > 0)
    m_drainTimer->start();
  else
    QTimer::singleShot(0, this, &TrialRunner::emitFinished);
}

void TrialRunner::emitFinished() {
  if (!m_active) return;
  m_drainTimer->stop();
  if (m_channel) m_channel->flush();
  if (m_outcome.status == TrialOutcome::Status::Failed && m_outcome.failed_rank >= 0 &&
      size_t(m_outcome.failed_rank) < m_ranks.size()) {
    const Rank& r = *m_ranks[size_t(m_outcome.failed_rank)];
    const QString err = errorEventText(r);
    if (!err.isEmpty()) m_outcome.reason += QStringLiteral(" — ") + err;
    QStringList tail(r.stderrTail.begin(), r.stderrTail.end());
    m_outcome.stderr_tail = tail.join('\n');
  }
  if (m_channel) m_channel->close();
  m_active = false;
  m_watchdog->stop();
  m_killTimer->stop();
  const TrialOutcome outcome = m_outcome;
  emit finished(outcome);
}

std::vector<qint64> TrialRunner::pids() const {
  std::vector<qint64> out;
  for (const auto& r : m_ranks) out.push_back(r->pid);
  return out;
}

}  // namespace tunebench::ui
