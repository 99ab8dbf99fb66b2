#include "ui/runner/trial_runner.h"

#include <algorithm>
#include <csignal>
#include <future>

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QProcess>
#include <QTimer>

#include "core/launch/kernel_traces.h"
#include "core/launch/launch_setup.h"
#include "core/launch/trial_supervisor.h"
#include "core/protocol/exit_codes.h"
#include "ui/runner/event_channel.h"
#include "ui/runner/exit_reason.h"
#include "ui/runner/process_group.h"

namespace tunebench::ui {

namespace {
constexpr int kTickMs = 250;  // the supervisor's clock: hang checks, SIGKILL after the grace period, drain

TrialOutcome outcome_of(const QString& trialId, const launch::TrialEnd& end) {
  TrialOutcome o;
  o.trial_id = trialId;
  o.status = end.status;
  o.exit_code = end.exit_code;
  o.reason = QString::fromStdString(end.reason);
  QStringList tail;
  for (const auto& line : end.stderr_tail) tail << QString::fromStdString(line);
  o.stderr_tail = tail.join('\n');
  o.failed_rank = end.failed_rank;
  return o;
}
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
  QProcess* process = nullptr;
  qint64 pid = 0;
  bool running = false;
  int logRank = -1;  // the rank its own lines belong to (-1: several ranks)
  QString label;
};

TrialRunner::TrialRunner(QObject* parent) : LiveSource(parent), m_watchdog(new QTimer(this)) {
  m_watchdog->setInterval(kTickMs);
  connect(m_watchdog, &QTimer::timeout, this, &TrialRunner::onTick);
}

TrialRunner::~TrialRunner() {
  if (m_fold.valid()) m_fold.wait();  // it reads through m_kernelTraces and posts to this
  for (auto& p : m_procs)
    if (p && p->running) {
      p->process->disconnect(this);
      signal_process_group(p->pid, SIGKILL);
      p->process->waitForFinished(2000);
    }
  m_procs.clear();  // the processes are children: Qt deletes what deleteLater has not yet
}

bool TrialRunner::start(const TrialRequest& request) {
  if (m_active) return false;
  m_request = request;
  m_outcome = TrialOutcome{};
  m_outcome.trial_id = request.id;
  m_procs.clear();
  m_supervisor.reset();
  m_finishing = false;
  m_active = true;
  ++m_run;
  m_clock.start();
  emit started(request.id);

  auto refuse = [&](const launch::TrialEnd& end) {
    m_outcome = outcome_of(request.id, end);
    emitFinished();
    return false;
  };
  const config::TrialConfig& config = request.config;
  if (const auto problem = launch::config_problems(config))
    return refuse(launch::TrialEnd::refused(*problem, protocol::kExitConfig));

  if (m_channel) m_channel->deleteLater();  // we may be inside one of its signals
  m_channel = new EventChannel(this);
  connect(m_channel, &EventChannel::eventsArrived, this, &TrialRunner::onEvents);
  connect(m_channel, &EventChannel::logLine, this, &LiveSource::logLine);
  connect(m_channel, &EventChannel::connectionClosed, this, &TrialRunner::maybeFinish);

  launch::PreparedLaunch launch;
  try {
    m_dir = std::make_unique<launch::TrialDir>();
    if (!m_channel->listen(QString::fromStdString(m_dir->file("events.sock"))))
      throw launch::LaunchError("cannot open the event channel: " + m_channel->errorString().toStdString());
    launch::LaunchRequest r;
    r.config = config;
    r.trial_id = request.id.toStdString();
    r.worker = request.worker_program.toStdString();
    r.program_dir = QCoreApplication::applicationDirPath().toStdString();
    r.dir = m_dir->path();
    r.events_socket = m_dir->file("events.sock");
    r.link_probe = request.link_probe;
    r.listen_tcp = [this](const std::string& token, std::string* error) {
      if (m_channel->listenTcp(QString::fromStdString(token))) return int(m_channel->tcpPort());
      *error = m_channel->errorString().toStdString();
      return 0;
    };
    launch = launch::prepare_launch(r);
  } catch (const std::exception& e) {
    return refuse(launch::TrialEnd::refused(e.what()));
  }
  m_request.worker_program = QString::fromStdString(launch.context.worker);

  launch::SupervisorOptions options;
  options.grace_s = m_graceMs / 1000.0;
  options.startup_allowance_s = m_startupAllowanceMs / 1000.0;
  m_supervisor = std::make_unique<launch::TrialSupervisor>(config, launch.plan.processes, request.link_probe, options);
  m_kernelTraces = std::make_unique<launch::KernelTraces>(m_dir->path());
  if (config.launcher == config::Launcher::Local)
    emit logLine({-1, LogLine::Source::Runner,
                  QStringLiteral("starting %1 rank(s): %2 (MASTER_PORT=%3)")
                      .arg(config.world_size)
                      .arg(QString::fromStdString(launch::shell_join(launch.plan.processes.front().argv)))
                      .arg(launch.context.master_port)});
  else
    emit logLine({-1, LogLine::Source::Runner,
                  QStringLiteral("starting %1 rank(s) through %2 (MASTER_PORT=%3):\n%4")
                      .arg(config.world_size)
                      .arg(QString::fromStdString(std::string(config::to_string(config.launcher))))
                      .arg(launch.context.master_port)
                      .arg(QString::fromStdString(launch.plan.preview()).trimmed())});
  m_procs.resize(launch.plan.processes.size());
  for (size_t i = 0; i < m_procs.size() && m_supervisor->should_start_more(); ++i) startProcess(i);
  m_watchdog->start();
  return m_active;
}

void TrialRunner::startProcess(size_t index) {
  const launch::LaunchProcess& spec = m_supervisor->processes()[index];
  m_procs[index] = std::make_unique<Proc>();
  Proc& proc = *m_procs[index];
  proc.process = new QProcess(this);
  proc.logRank = spec.ranks.size() == 1 ? spec.ranks.front() : -1;
  proc.label = QString::fromStdString(spec.label());
  QProcess* p = proc.process;
  p->setProgram(QString::fromStdString(spec.argv.front()));
  QStringList args;
  for (size_t i = 1; i < spec.argv.size(); ++i) args << QString::fromStdString(spec.argv[i]);
  p->setArguments(args);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  for (const auto& [k, v] : spec.env) env.insert(QString::fromStdString(k), QString::fromStdString(v));
  p->setProcessEnvironment(env);
  run_in_own_process_group(*p);
  // These connections live exactly as long as the Proc: ~Proc disconnects the process first.
  connect(p, &QProcess::readyReadStandardOutput, this, [this, index] { readOutput(index, false); });
  connect(p, &QProcess::readyReadStandardError, this, [this, index] { readOutput(index, true); });
  connect(p, &QProcess::finished, this, [this, index](int code, QProcess::ExitStatus status) {
    onProcessFinished(index, code, status == QProcess::CrashExit);
  });
  connect(p, &QProcess::errorOccurred, this, [this, index](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart) onProcessStartFailed(index);
  });
  proc.running = true;
  m_supervisor->launched(index);
  p->start();
  proc.pid = p->processId();
}

void TrialRunner::readOutput(size_t index, bool stderrStream) {
  Proc& p = *m_procs[index];
  const QByteArray bytes = stderrStream ? p.process->readAllStandardError() : p.process->readAllStandardOutput();
  if (bytes.isEmpty()) return;
  carryOut(m_supervisor->output(index, stderrStream, std::string_view(bytes.constData(), size_t(bytes.size())), now()));
}

void TrialRunner::onProcessStartFailed(size_t index) {
  Proc& p = *m_procs[index];
  if (!p.running) return;
  p.running = false;
  carryOut(m_supervisor->start_failed(index, now(), p.process->errorString().toStdString()));
  maybeFinish();
}

void TrialRunner::onProcessFinished(size_t index, int exitCode, bool crashed) {
  Proc& p = *m_procs[index];
  if (!p.running) return;
  p.running = false;
  readOutput(index, false);
  readOutput(index, true);
  // The supervisor judges an exit by the events it has seen (a rank's done): every event received
  // before the exit reaches it first, as when no trace was being read.
  drainFolds();
  launch::ProcessExit exit;
  (crashed ? exit.signal : exit.exit_code) = exitCode;
  carryOut(m_supervisor->exited(index, exit, now()));
  maybeFinish();
}

namespace {

bool reads_a_trace(const EventBatch& batch) {
  return std::any_of(batch.begin(), batch.end(), [](const protocol::Event& e) {
    return e.is<protocol::Step>() && !e.as<protocol::Step>().kernel_trace.empty();
  });
}

// A script's kernel-sampled steps get their trace's GPU figures before anyone sees them.
EventBatch folded(launch::KernelTraces& traces, const EventBatch& received) {
  EventBatch batch;
  batch.reserve(received.size());
  for (auto e : received) {
    auto note = traces.apply(e);
    batch.push_back(std::move(e));
    if (note) batch.push_back(std::move(*note));
  }
  return batch;
}

}  // namespace

void TrialRunner::onEvents(const EventBatch& received) {
  if (!m_supervisor) return;
  m_unfolded.push_back(received);
  foldNext();
}

void TrialRunner::foldNext() {
  while (!m_fold.valid() && !m_unfolded.empty()) {
    EventBatch next = std::move(m_unfolded.front());
    m_unfolded.pop_front();
    if (!reads_a_trace(next)) {
      deliver(folded(*m_kernelTraces, next));  // nothing to read: at once, as it came
      continue;
    }
    const quint64 id = ++m_foldId;
    launch::KernelTraces* traces = m_kernelTraces.get();
    m_fold = std::async(std::launch::async, [this, traces, id, next = std::move(next)] {
      EventBatch out = folded(*traces, next);
      QMetaObject::invokeMethod(this, [this, id] { onFolded(id); }, Qt::QueuedConnection);
      return out;
    });
  }
}

void TrialRunner::onFolded(quint64 fold) {
  if (fold != m_foldId || !m_fold.valid()) return;  // drained meanwhile
  deliver(m_fold.get());
  foldNext();
}

void TrialRunner::drainFolds() {
  if (m_fold.valid()) {
    ++m_foldId;  // its posted onFolded is stale now
    deliver(m_fold.get());
  }
  while (!m_unfolded.empty()) {
    EventBatch next = std::move(m_unfolded.front());
    m_unfolded.pop_front();
    deliver(folded(*m_kernelTraces, next));
  }
}

void TrialRunner::deliver(const EventBatch& batch) {
  if (!m_supervisor) return;
  for (const auto& e : batch) {
    m_supervisor->event(e, now());
    const int rank = e.header.rank;
    if (e.is<protocol::Error>()) {
      const auto& err = e.as<protocol::Error>();
      emit logLine(
          {rank, LogLine::Source::Event,
           QStringLiteral("error (%1): %2")
               .arg(describe_error_kind(QString::fromStdString(err.kind)), QString::fromStdString(err.message))});
    } else if (e.is<protocol::Warning>()) {
      emit logLine({rank, LogLine::Source::Event,
                    QStringLiteral("warning: ") + QString::fromStdString(e.as<protocol::Warning>().message)});
    } else if (e.is<protocol::Log>()) {
      emit logLine({rank, LogLine::Source::Event, QString::fromStdString(e.as<protocol::Log>().message)});
    }
  }
  emit eventsArrived(batch);
  const launch::Progress s = m_supervisor->progress();
  TrialProgress p{m_request.id, s.step, s.steps, now(), s.ms_per_step > 0 ? s.eta_s : -1.0};
  if (m_request.link_probe) p.unit = QStringLiteral("size");
  emit progress(p);
}

void TrialRunner::stop() {
  if (!m_active || m_finishing || !m_supervisor) return;
  carryOut(m_supervisor->stop(now()));
}

void TrialRunner::stopAndWait() {
  stop();
  // The supervisor's own policy, driven synchronously: SIGTERM now, SIGKILL after the grace period.
  QDeadlineTimer deadline(m_graceMs + 3000);
  auto running = [this] {
    return std::any_of(m_procs.begin(), m_procs.end(), [](const auto& p) { return p && p->running; });
  };
  while (running() && !deadline.hasExpired()) {
    for (auto& p : m_procs)
      if (p && p->running) p->process->waitForFinished(50);
    onTick();
  }
  for (auto& p : m_procs)
    if (p && p->running) {  // past every deadline: nothing may outlive the runner
      signal_process_group(p->pid, SIGKILL);
      p->process->waitForFinished(2000);
    }
  if (m_active) emitFinished();
}

void TrialRunner::onTick() {
  if (!m_supervisor) return;
  carryOut(m_supervisor->tick(now()));
  maybeFinish();
}

void TrialRunner::carryOut(launch::Actions&& actions) {
  for (const launch::Command& c : actions.commands) {
    Proc* p = c.process < m_procs.size() ? m_procs[c.process].get() : nullptr;
    if (!p) continue;
    switch (c.kind) {
      case launch::Command::Kind::Terminate:
        signal_process_group(p->pid, SIGTERM);
        break;
      case launch::Command::Kind::Kill:
        signal_process_group(p->pid, SIGKILL);
        break;
      case launch::Command::Kind::CloseStdin:
        p->process->closeWriteChannel();  // the node script ends its ranks, then ssh exits
        break;
      case launch::Command::Kind::Scancel: {
        QStringList args;
        const auto argv = launch::scancel_argv(c.job_id);
        for (size_t i = 1; i < argv.size(); ++i) args << QString::fromStdString(argv[i]);
        QProcess::startDetached(QString::fromStdString(argv.front()), args);
        break;
      }
    }
  }
  for (const launch::Note& n : actions.notes)
    emit logLine({n.rank, LogLine::Source::Runner, QString::fromStdString(n.text)});
  for (const launch::OutputLine& l : actions.lines) {
    const Proc& p = *m_procs[l.process];
    const QString text = QString::fromStdString(l.text);
    emit logLine({p.logRank, l.is_stderr ? LogLine::Source::Stderr : LogLine::Source::Stdout,
                  p.logRank >= 0 ? text : QStringLiteral("[%1] %2").arg(p.label, text)});
  }
}

void TrialRunner::maybeFinish() {
  if (!m_active || m_finishing || !m_supervisor) return;
  // The processes are gone but their sockets may still hold the last lines (often the error event
  // that explains the exit): the supervisor waits for every connection to close, a while at most.
  if (!m_supervisor->finished(now(), m_channel ? m_channel->openConnections() : 0)) return;
  m_finishing = true;
  m_watchdog->stop();
  QTimer::singleShot(0, this, [this, run = m_run] {
    if (run == m_run) emitFinished();  // not a later trial's, started meanwhile
  });
}

void TrialRunner::emitFinished() {
  if (!m_active) return;
  if (m_channel) m_channel->flush();
  drainFolds();  // the last window's trace, and the events behind it, before the outcome
  if (m_supervisor) m_outcome = outcome_of(m_request.id, m_supervisor->end());
  if (m_channel) m_channel->close();
  m_active = false;
  m_watchdog->stop();
  const TrialOutcome outcome = m_outcome;
  emit finished(outcome);
}

std::vector<qint64> TrialRunner::pids() const {
  std::vector<qint64> out;
  for (const auto& p : m_procs)
    if (p) out.push_back(p->pid);
  return out;
}

}  // namespace tunebench::ui
