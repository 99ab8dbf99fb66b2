#include "ui/runner/trial_runner.h"

#include <algorithm>
#include <csignal>
#include <deque>

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHostInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTimer>

#include "core/launch/launch_plan.h"
#include "core/launch/link_probe.h"
#include "core/launch/random_token.h"
#include "ui/runner/event_channel.h"
#include "ui/runner/exit_reason.h"
#include "ui/runner/process_group.h"
#include "ui/runner/worker_launch.h"

namespace tunebench::ui {

namespace {
constexpr int kStderrTailLines = 20;
constexpr int kDrainMs = 1000;
}  // namespace

// One process of the current trial (a rank, an ssh connection to a node, srun or sbatch). It owns
// its QProcess: when the next trial starts (or the runner goes), the process is disconnected and
// deleted, so no signal of an old process can reach a Proc that no longer exists (deleteLater:
// start() may run inside that process's own signal).
struct TrialRunner::Proc {
  ~Proc() {
    if (!process) return;
    process->disconnect();
    process->deleteLater();
  }
  launch::LaunchProcess spec;
  QProcess* process = nullptr;
  qint64 pid = 0;
  bool running = false;
  QByteArray partial[2];  // stdout, stderr: bytes after the last newline
  std::deque<QString> stderrTail;
  QString jobId;  // sbatch
  int logRank() const { return spec.ranks.size() == 1 ? spec.ranks.front() : -1; }
  QString label() const { return QString::fromStdString(spec.label()); }
};

// One rank of the current trial, wherever it runs.
struct TrialRunner::Rank {
  int rank = 0;
  Proc* proc = nullptr;
  bool running = false;
  bool sawEvent = false;
  int lastStep = -1;
  int probePoints = 0;  // link probe: sizes this rank reported
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
  for (auto& p : m_procs)
    if (p->running) {
      p->process->disconnect(this);
      signal_process_group(p->pid, SIGKILL);
      p->process->waitForFinished(2000);
    }
  m_ranks.clear();
  m_procs.clear();  // the processes are children: Qt deletes what deleteLater has not yet
}

bool TrialRunner::start(const TrialRequest& request) {
  if (m_active) return false;
  m_request = request;
  m_outcome = TrialOutcome{request.id, protocol::TrialStatus::Done, {}, {}, -1};
  m_ranks.clear();
  m_procs.clear();
  m_stopping = m_finishing = false;
  m_firstStepSeen = -1;
  m_probePoints = request.link_probe ? launch::link_probe_points(*request.link_probe) : 0;
  m_active = true;
  m_clock.start();
  emit started(request.id);

  auto refuse = [&](const QString& reason) {
    m_outcome.status = protocol::TrialStatus::Failed;
    m_outcome.reason = reason;
    emitFinished();
    return false;
  };
  const config::TrialConfig& config = request.config;
  const auto problems = config::validate(config);
  if (!problems.empty())
    return refuse(QStringLiteral("invalid configuration: ") +
                  QString::fromStdString(config::describe(problems)).trimmed());

  m_dir = std::make_unique<QTemporaryDir>();
  if (!m_dir->isValid()) return refuse(QStringLiteral("cannot create a temporary directory: ") + m_dir->errorString());
  const QString configPath = m_dir->filePath(QStringLiteral("trial.json"));
  QFile file(configPath);
  if (!file.open(QIODevice::WriteOnly) ||
      file.write(QByteArray::fromStdString(config::to_json(config).dump(2))) < 0)
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

  // The launch plan: the one definition of what runs where (core/launch).
  const QString program = request.worker_program.isEmpty() ? find_worker_program(QCoreApplication::applicationDirPath())
                                                           : request.worker_program;
  m_request.worker_program = program;
  launch::LaunchContext ctx;
  ctx.trial_id = request.id.toStdString();
  ctx.worker = program.toStdString();
  ctx.config_path = configPath.toStdString();
  ctx.events_socket = m_channel->spec().mid(5).toStdString();  // "unix:PATH"
  ctx.home = QDir::homePath().toStdString();
  ctx.link_probe = request.link_probe;
  try {
    ctx.nonce = launch::random_hex(8);
    if (config.launcher == config::Launcher::Local) {
      ctx.master_port = pick_free_port();
      if (ctx.master_port == 0) return refuse(QStringLiteral("no free TCP port on 127.0.0.1 for the rendezvous"));
    } else {
      ctx.master_port = 20000 + int(QRandomGenerator::global()->bounded(10000));
    }
    if (config.launcher == config::Launcher::Slurm) {
      ctx.token = launch::random_hex(32);
      if (!m_channel->listenTcp(QString::fromStdString(ctx.token)))
        return refuse(QStringLiteral("cannot listen for the SLURM ranks' events: ") + m_channel->errorString());
      const QString host =
          config.event_host.empty() ? QHostInfo::localHostName() : QString::fromStdString(config.event_host);
      ctx.tcp_events = QStringLiteral("%1:%2").arg(host).arg(m_channel->tcpPort()).toStdString();
    }
    m_plan = std::make_unique<launch::LaunchPlan>(launch::plan_launch(config, ctx));
  } catch (const std::exception& e) {
    return refuse(QStringLiteral("cannot plan the launch: ") + QString::fromUtf8(e.what()));
  }
  for (const auto& [path, text] : m_plan->files) {
    const QString p = QString::fromStdString(path);
    QDir().mkpath(QFileInfo(p).absolutePath());
    QFile out(p);
    if (!out.open(QIODevice::WriteOnly) || out.write(QByteArray::fromStdString(text)) < 0)
      return refuse(QStringLiteral("cannot write %1: %2").arg(p, out.errorString()));
  }
  for (int rank = 0; rank < config.world_size; ++rank) {
    auto r = std::make_unique<Rank>();
    r->rank = rank;
    m_ranks.push_back(std::move(r));
  }
  if (config.launcher == config::Launcher::Local)
    emit logLine({-1, LogLine::Source::Runner,
                  QStringLiteral("starting %1 rank(s): %2 (MASTER_PORT=%3)")
                      .arg(config.world_size)
                      .arg(QString::fromStdString(launch::shell_join(m_plan->processes.front().argv)))
                      .arg(ctx.master_port)});
  else
    emit logLine({-1, LogLine::Source::Runner,
                  QStringLiteral("starting %1 rank(s) through %2 (MASTER_PORT=%3):\n%4")
                      .arg(config.world_size)
                      .arg(QString::fromStdString(std::string(config::to_string(config.launcher))))
                      .arg(ctx.master_port)
                      .arg(QString::fromStdString(m_plan->preview()).trimmed())});
  for (size_t i = 0; i < m_plan->processes.size() && !m_stopping; ++i) startProcess(i);
  m_watchdog->start();
  return m_active;
}

void TrialRunner::startProcess(size_t index) {
  auto owned = std::make_unique<Proc>();
  Proc* raw = owned.get();
  raw->spec = m_plan->processes[index];
  raw->process = new QProcess(this);
  QProcess* p = raw->process;
  p->setProgram(QString::fromStdString(raw->spec.argv.front()));
  QStringList args;
  for (size_t i = 1; i < raw->spec.argv.size(); ++i) args << QString::fromStdString(raw->spec.argv[i]);
  p->setArguments(args);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  for (const auto& [k, v] : raw->spec.env) env.insert(QString::fromStdString(k), QString::fromStdString(v));
  p->setProcessEnvironment(env);
  run_in_own_process_group(*p);
  // `raw` lives exactly as long as these connections: ~Proc disconnects the process first.
  connect(p, &QProcess::readyReadStandardOutput, this, [this, raw] { readOutput(*raw, false, false); });
  connect(p, &QProcess::readyReadStandardError, this, [this, raw] { readOutput(*raw, true, false); });
  connect(p, &QProcess::finished, this, [this, raw](int code, QProcess::ExitStatus status) {
    onProcessFinished(*raw, code, status == QProcess::CrashExit);
  });
  connect(p, &QProcess::errorOccurred, this, [this, raw](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart) onProcessStartFailed(*raw);
  });
  m_procs.push_back(std::move(owned));
  raw->running = true;
  for (int r : raw->spec.ranks) {
    m_ranks[size_t(r)]->proc = raw;
    m_ranks[size_t(r)]->running = true;
  }
  p->start();
  raw->pid = p->processId();
}

void TrialRunner::readOutput(Proc& p, bool stderrStream, bool flushPartial) {
  QByteArray& buf = p.partial[stderrStream ? 1 : 0];
  buf += stderrStream ? p.process->readAllStandardError() : p.process->readAllStandardOutput();
  int start = 0;
  auto emitLine = [&](QByteArray bytes) {
    if (bytes.endsWith('\r')) bytes.chop(1);
    const QString text = QString::fromUtf8(bytes);
    if (stderrStream) {
      p.stderrTail.push_back(text);
      if (p.stderrTail.size() > kStderrTailLines) p.stderrTail.pop_front();
    } else if (p.spec.kind == launch::LaunchProcess::Kind::SshNode) {
      // The node script's report of a rank's exit (the remote shell's status: 128 + N = signal N).
      if (const auto exit = launch::parse_rank_exit(bytes.toStdString())) {
        const auto& ranks = p.spec.ranks;
        if (std::find(ranks.begin(), ranks.end(), exit->first) != ranks.end())
          rankExited(exit->first, describe_shell_status(exit->second), exit->second != 0);
        return;
      }
    } else if (p.spec.kind == launch::LaunchProcess::Kind::SlurmBatch && p.jobId.isEmpty()) {
      if (const auto id = launch::parse_sbatch_job_id(bytes.trimmed().toStdString()))
        p.jobId = QString::fromStdString(*id);
    }
    const QString shown = p.logRank() >= 0 ? text : QStringLiteral("[%1] %2").arg(p.label(), text);
    emit logLine({p.logRank(), stderrStream ? LogLine::Source::Stderr : LogLine::Source::Stdout, shown});
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

void TrialRunner::onProcessStartFailed(Proc& p) {
  if (!p.running) return;
  p.running = false;
  for (int r : p.spec.ranks) m_ranks[size_t(r)]->running = false;
  fail(p.spec.ranks.empty() ? -1 : p.spec.ranks.front(),
       QStringLiteral("%1 could not start %2: %3").arg(p.label(), p.process->program(), p.process->errorString()));
  maybeFinish();
}

void TrialRunner::rankExited(int rank, const QString& how, bool failed) {
  Rank& r = *m_ranks[size_t(rank)];
  if (!r.running) return;
  r.running = false;
  emit logLine({rank, LogLine::Source::Runner, QStringLiteral("rank %1 %2").arg(rank).arg(how)});
  if (failed && !m_stopping) fail(rank, QStringLiteral("rank %1 failed: %2").arg(rank).arg(how));
}

void TrialRunner::onProcessFinished(Proc& p, int exitCode, bool crashed) {
  if (!p.running) return;
  p.running = false;
  readOutput(p, false, true);
  readOutput(p, true, true);
  if (p.spec.kind == launch::LaunchProcess::Kind::Rank) {
    const int rank = p.spec.ranks.front();
    QString how = crashed ? describe_signal(exitCode) : describe_exit_code(exitCode);
    // Our own SIGTERM/SIGKILL is not "terminated from outside": say who stopped the rank and why.
    if (m_stopping && crashed && (exitCode == SIGTERM || exitCode == SIGKILL)) {
      const QString sig =
          exitCode == SIGTERM ? QStringLiteral("SIGTERM") : QStringLiteral("SIGKILL after ignoring SIGTERM");
      if (m_outcome.status == protocol::TrialStatus::Stopped)
        how = QStringLiteral("stopped by the user (%1)").arg(sig);
      else if (m_outcome.status == protocol::TrialStatus::Failed && m_outcome.failed_rank != rank)
        how = QStringLiteral("stopped because rank %1 failed (%2)").arg(m_outcome.failed_rank).arg(sig);
    }
    rankExited(rank, how, crashed || exitCode != 0);
  } else {
    const int status = crashed ? 128 + exitCode : exitCode;
    QString how = p.spec.kind == launch::LaunchProcess::Kind::SshNode && status == 255
                      ? QStringLiteral("the ssh connection failed or was lost")
                      : describe_shell_status(status);
    if (!p.stderrTail.empty()) how += QStringLiteral(": ") + p.stderrTail.back();
    emit logLine({-1, LogLine::Source::Runner, QStringLiteral("%1 ended: %2").arg(p.label(), how)});
    bool missing = false;  // ranks whose end was not reported: the connection or the job went away
    for (int r : p.spec.ranks)
      if (m_ranks[size_t(r)]->running) {
        missing = true;
        m_ranks[size_t(r)]->running = false;
      }
    const bool failed = p.spec.kind == launch::LaunchProcess::Kind::SshNode ? missing : status != 0;
    if (failed && !m_stopping)
      fail(p.spec.ranks.empty() ? -1 : p.spec.ranks.front(),
           p.spec.kind == launch::LaunchProcess::Kind::SshNode ? QStringLiteral("lost %1: %2").arg(p.label(), how)
                                                             : QStringLiteral("%1 failed: %2").arg(p.label(), how));
  }
  maybeFinish();
}

void TrialRunner::fail(int rank, const QString& reason) {
  if (m_outcome.status == protocol::TrialStatus::Done) {
    m_outcome.status = protocol::TrialStatus::Failed;
    m_outcome.reason = reason;
    m_outcome.failed_rank = rank;
  }
  terminateAll();
}

void TrialRunner::stop() {
  if (!m_active || m_finishing) return;
  if (m_outcome.status == protocol::TrialStatus::Done) {
    m_outcome.status = protocol::TrialStatus::Stopped;
    m_outcome.reason = QStringLiteral("stopped by the user");
  }
  terminateAll();
}

void TrialRunner::stopAndWait() {
  stop();
  QDeadlineTimer deadline(m_graceMs + 3000);
  for (auto& p : m_procs) {
    if (!p->running) continue;
    if (!p->process->waitForFinished(int(std::max<qint64>(1, deadline.remainingTime() - 2000)))) {
      signal_process_group(p->pid, SIGKILL);
      p->process->waitForFinished(2000);
    }
  }
  if (m_active) emitFinished();
}

void TrialRunner::terminateAll() {
  if (m_stopping) return;
  m_stopping = true;
  for (auto& p : m_procs) {
    if (!p->running) continue;
    if (p->spec.stop_by_closing_stdin) {
      p->process->closeWriteChannel();  // the node script ends its ranks, then ssh exits
    } else {
      if (p->spec.kind == launch::LaunchProcess::Kind::SlurmBatch && !p->jobId.isEmpty()) {
        emit logLine({-1, LogLine::Source::Runner, QStringLiteral("scancel %1").arg(p->jobId)});
        QProcess::startDetached(QStringLiteral("scancel"), {p->jobId});
      }
      signal_process_group(p->pid, SIGTERM);
    }
  }
  m_killTimer->start(m_graceMs);
}

void TrialRunner::killAll() {
  for (auto& p : m_procs)
    if (p->running) {
      emit logLine({p->logRank(), LogLine::Source::Runner,
                    QStringLiteral("%1 did not end within %2 ms: sending SIGKILL").arg(p->label()).arg(m_graceMs)});
      signal_process_group(p->pid, SIGKILL);
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
    } else if (e.is<protocol::LinkProbe>()) {
      ++r.probePoints;
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

  // Progress: the step every rank has completed (ranks move in lock step under DDP/FSDP); for a
  // link probe, the message sizes every rank has measured.
  const bool probe = m_request.link_probe.has_value();
  int done = INT32_MAX;
  for (const auto& r : m_ranks) done = std::min(done, probe ? r->probePoints : r->lastStep + 1);
  if (m_ranks.empty()) done = 0;
  const double elapsed = m_clock.elapsed() / 1000.0;
  TrialProgress p{m_request.id, done, probe ? m_probePoints : int(m_request.config.steps), elapsed, -1.0};
  if (probe) p.unit = QStringLiteral("size");
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
  for (const auto& p : m_procs)
    if (p->running) return;
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
  if (m_outcome.status == protocol::TrialStatus::Failed && m_outcome.failed_rank >= 0 &&
      size_t(m_outcome.failed_rank) < m_ranks.size()) {
    const Rank& r = *m_ranks[size_t(m_outcome.failed_rank)];
    const QString err = errorEventText(r);
    if (!err.isEmpty()) m_outcome.reason += QStringLiteral(" — ") + err;
    if (r.proc) {
      QStringList tail(r.proc->stderrTail.begin(), r.proc->stderrTail.end());
      m_outcome.stderr_tail = tail.join('\n');
    }
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
  for (const auto& p : m_procs) out.push_back(p->pid);
  return out;
}

}  // namespace tunebench::ui
