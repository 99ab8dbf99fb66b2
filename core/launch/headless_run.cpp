// run_trial: the headless runner, a thin adapter around launch::TrialSupervisor. One poll loop over
// the event listener and the processes' pipes: bytes, exits, events and Ctrl-C go to the
// supervisor, its commands become signals, closed stdins and scancel, and events go to a
// store::TrialWriter as in the GUI (LiveRecorder). The outcome rules are the supervisor's alone.
#include "core/launch/headless_run.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>

#include "core/config/known_settings.h"
#include "core/launch/child_process.h"
#include "core/launch/event_listener.h"
#include "core/launch/kernel_traces.h"
#include "core/launch/launch_setup.h"
#include "core/protocol/exit_codes.h"
#include "core/store/session_store.h"
#include "core/store/trial_writer.h"

namespace tunebench::launch {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using protocol::TrialStatus;

constexpr int kPollMs = 50;

class Run {
 public:
  explicit Run(const HeadlessRequest& r) : m_req(r) {}
  HeadlessResult run();

 private:
  HeadlessResult refuse(store::SessionStore* session, const std::string& why, int exit_code);
  void start_processes();
  void loop();
  void read_pipe(size_t i, bool is_stderr);
  void carry_out(Actions&& actions);
  void report_progress();
  double now() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }

  const HeadlessRequest& m_req;
  config::TrialConfig m_config;
  HeadlessResult m_result;
  Clock::time_point m_start = Clock::now();
  std::unique_ptr<TrialDir> m_dir;
  std::unique_ptr<store::TrialWriter> m_writer;
  std::unique_ptr<EventListener> m_listener;
  std::unique_ptr<KernelTraces> m_kernel_traces;  // a script's kernel-sampled steps, folded in before they are stored
  std::unique_ptr<TrialSupervisor> m_supervisor;
  std::vector<std::unique_ptr<ChildProcess>> m_children;  // by plan index; null when not started
  int m_progress_step = -1;
};

HeadlessResult Run::refuse(store::SessionStore* session, const std::string& why, int exit_code) {
  m_result.end = TrialEnd::refused(why, exit_code);
  m_result.message = why;
  if (session && m_result.trial_id >= 0) {
    try {
      session->set_trial_status(m_result.trial_id, TrialStatus::Failed, why);
    } catch (const std::exception& e) {
      m_result.message += std::string(" (and the session could not be updated: ") + e.what() + ")";
    }
  }
  return m_result;
}

HeadlessResult Run::run() {
  m_config = m_req.config;
  if (!m_req.name.empty()) m_config.name = m_req.name;
  if (const auto problem = config_problems(m_config)) return refuse(nullptr, *problem, protocol::kExitConfig);
  const std::string name = m_config.name.empty() ? std::string("trial") : m_config.name;
  std::unique_ptr<store::SessionStore> session;
  try {
    if (fs::exists(m_req.session_path))
      session = std::make_unique<store::SessionStore>(store::SessionStore::open(m_req.session_path));
    else
      session = std::make_unique<store::SessionStore>(
          store::SessionStore::create(m_req.session_path, fs::path(m_req.session_path).stem().string()));
    m_result.trial_id = session->add_trial(name, config::recorded_json(m_config), TrialStatus::Queued, m_req.source);
    if (!m_req.tags.empty()) session->set_trial_tags(m_result.trial_id, m_req.tags);
  } catch (const std::exception& e) {
    return refuse(nullptr, e.what(), protocol::kExitInternal);
  }

  PreparedLaunch launch;
  try {
    m_dir = std::make_unique<TrialDir>();
    m_kernel_traces = std::make_unique<KernelTraces>(m_dir->path());
    m_listener = std::make_unique<EventListener>(EventListener::Callbacks{[this](protocol::Event&& e) {
                                                                            const auto note = m_kernel_traces->apply(e);
                                                                            if (m_supervisor)
                                                                              m_supervisor->event(e, now());
                                                                            if (m_writer) m_writer->add(e);
                                                                            if (note && m_writer) m_writer->add(*note);
                                                                          },
                                                                          [this](const protocol::ReadProblem& p) {
                                                                            if (m_writer) m_writer->add_problem(p);
                                                                          },
                                                                          [](const std::string&) {}});
    LaunchRequest request;
    request.config = m_config;
    request.trial_id = "trial-" + std::to_string(m_result.trial_id);
    request.worker = m_req.worker;
    request.dir = m_dir->path();
    request.events_socket = m_dir->file("events.sock");
    request.link_probe = m_req.link_probe;
    request.listen_tcp = [this](const std::string& token, std::string* error) {
      return m_listener->listen_tcp("0.0.0.0", 0, token, error) ? m_listener->tcp_port() : 0;
    };
    std::string error;
    if (!m_listener->listen_unix(request.events_socket, &error)) throw LaunchError(error);
    launch = prepare_launch(request);
  } catch (const std::exception& e) {
    return refuse(session.get(), e.what(), protocol::kExitInternal);
  }
  // The writer's connection owns the trial from here. Ours closes first: SQLite's WAL relies on
  // POSIX locks, which any close() of the file within this process would drop for every
  // connection, and a reader elsewhere would then take the WAL for abandoned and delete it.
  session.reset();
  try {
    m_writer = std::make_unique<store::TrialWriter>(m_req.session_path, m_result.trial_id);
  } catch (const std::exception& e) {
    return refuse(nullptr, e.what(), protocol::kExitInternal);
  }

  SupervisorOptions options = m_req.supervision;
  options.timeout_s = m_req.timeout_s;
  m_supervisor = std::make_unique<TrialSupervisor>(m_config, launch.plan.processes, m_req.link_probe, options);
  start_processes();
  loop();

  m_result.end = m_supervisor->end();
  m_result.message = m_result.end.message();
  try {
    m_writer->finish(m_result.end.status, m_result.end.reason);
  } catch (const std::exception& e) {
    m_result.message +=
        std::string(m_result.message.empty() ? "" : "; ") + "the session could not be updated: " + e.what();
    if (m_result.end.exit_code == 0) m_result.end.exit_code = protocol::kExitInternal;
  }
  m_writer.reset();
  m_listener.reset();
  m_children.clear();  // reaps (and SIGKILLs the group of) anything still there
  return m_result;
}

void Run::start_processes() {
  const auto& specs = m_supervisor->processes();
  m_children.resize(specs.size());
  for (size_t i = 0; i < specs.size() && m_supervisor->should_start_more(); ++i) {
    std::string error;
    m_children[i] = ChildProcess::start(specs[i].argv, specs[i].env, &error);
    if (m_children[i])
      m_supervisor->launched(i);
    else
      carry_out(m_supervisor->start_failed(i, now(), error));
  }
}

void Run::loop() {
  while (true) {
    std::vector<pollfd> fds;
    m_listener->add_poll_fds(fds);
    const size_t listener_fds = fds.size();
    for (const auto& c : m_children) {
      if (!c) continue;
      if (c->stdout_fd() >= 0) fds.push_back({c->stdout_fd(), POLLIN, 0});
      if (c->stderr_fd() >= 0) fds.push_back({c->stderr_fd(), POLLIN, 0});
    }
    ::poll(fds.data(), fds.size(), kPollMs);
    m_listener->handle(std::vector<pollfd>(fds.begin(), fds.begin() + std::ptrdiff_t(listener_fds)));
    for (size_t f = listener_fds; f < fds.size(); ++f) {
      if (!(fds[f].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      for (size_t i = 0; i < m_children.size(); ++i) {
        if (!m_children[i]) continue;
        if (fds[f].fd == m_children[i]->stdout_fd())
          read_pipe(i, false);
        else if (fds[f].fd == m_children[i]->stderr_fd())
          read_pipe(i, true);
      }
    }
    for (size_t i = 0; i < m_children.size(); ++i) {
      ChildProcess* c = m_children[i].get();
      if (!c || c->exited() || !c->poll_exit()) continue;
      // Its pipes may still hold its last lines (the rank-exit reports of an ssh node).
      while (c->stdout_fd() >= 0) read_pipe(i, false);
      while (c->stderr_fd() >= 0) read_pipe(i, true);
      carry_out(m_supervisor->exited(i, {c->exit_code(), c->term_signal()}, now()));
    }
    report_progress();
    if (m_supervisor->finished(now(), m_listener->open_connections())) break;
    if (m_req.cancelled && !m_supervisor->stopping() && m_req.cancelled()) carry_out(m_supervisor->stop(now()));
    carry_out(m_supervisor->tick(now()));
  }
  m_listener->close_all();
}

void Run::read_pipe(size_t i, bool is_stderr) {
  ChildProcess& c = *m_children[i];
  const int fd = is_stderr ? c.stderr_fd() : c.stdout_fd();
  if (fd < 0) return;
  char buf[65536];
  const ssize_t n = ::read(fd, buf, sizeof(buf));
  if (n < 0 && errno == EINTR) return;
  if (n <= 0) {
    carry_out(m_supervisor->output_closed(i, is_stderr, now()));
    is_stderr ? c.close_stderr() : c.close_stdout();
    return;
  }
  carry_out(m_supervisor->output(i, is_stderr, std::string_view(buf, size_t(n)), now()));
}

void Run::carry_out(Actions&& actions) {
  for (const Command& cmd : actions.commands) {
    ChildProcess* c = cmd.process < m_children.size() ? m_children[cmd.process].get() : nullptr;
    if (!c) continue;
    switch (cmd.kind) {
      case Command::Kind::Terminate:
        c->signal_group(SIGTERM);
        break;
      case Command::Kind::Kill:
        c->signal_group(SIGKILL);
        break;
      case Command::Kind::CloseStdin:
        c->close_stdin();
        break;
      case Command::Kind::Scancel:
        run_command(scancel_argv(cmd.job_id), 10, nullptr);
        break;
    }
  }
  if (m_req.on_note)
    for (const Note& n : actions.notes) m_req.on_note(n);
}

void Run::report_progress() {
  const Progress p = m_supervisor->progress();
  if (p.step == m_progress_step) return;
  m_progress_step = p.step;
  if (m_req.on_progress) m_req.on_progress(p);
}

}  // namespace

HeadlessResult run_trial(const HeadlessRequest& request) {
  try {
    return Run(request).run();
  } catch (const std::exception& e) {
    HeadlessResult r;
    r.end = TrialEnd::refused(e.what());
    r.message = e.what();
    return r;
  }
}

}  // namespace tunebench::launch
