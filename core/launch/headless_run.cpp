// run_trial: the headless runner. One poll loop over the event listener and the launched
// processes' pipes; events go to a store::TrialWriter as in the GUI (LiveRecorder), and the
// outcome rules are the GUI runner's: a rank that fails fails the trial and the others are
// stopped; a rank silent longer than the collective timeout is hung; Stop keeps finished steps.
#include "core/launch/headless_run.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/launch/child_process.h"
#include "core/launch/event_listener.h"
#include "core/launch/exit_reason.h"
#include "core/launch/launch_plan.h"
#include "core/launch/link_probe.h"
#include "core/launch/random_token.h"
#include "core/launch/worker_program.h"
#include "core/protocol/exit_codes.h"
#include "core/store/session_store.h"
#include "core/store/trial_writer.h"

namespace tunebench::launch {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr double kGraceS = 3.0;           // SIGTERM (or closed stdin) -> next escalation
constexpr double kStartupAllowanceS = 60;  // libtorch/CUDA start-up before the first event
constexpr double kDrainS = 1.0;           // after the last exit, for the sockets' last lines
constexpr size_t kTailLines = 20;

struct Proc {
  LaunchProcess spec;
  std::unique_ptr<ChildProcess> child;
  std::string partial[2];  // stdout, stderr bytes after the last '\n'
  std::deque<std::string> stderr_tail;
  std::string job_id;  // sbatch
  bool running = true;
};

struct RankState {
  bool exited = false;
  int status = 0;
  double last_event_s = -1;
  int last_step = -1;
  int probe_points = 0;  // link probe: sizes this rank reported
  std::string error_kind, error_message;
};

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  return ok ? ntohs(addr.sin_port) : 0;
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

class Run {
 public:
  explicit Run(const HeadlessRequest& r) : m_req(r) {}
  HeadlessResult run();

 private:
  bool prepare(std::string* error);
  void loop();
  void on_event(protocol::Event&& e);
  void on_line(Proc& p, bool is_stderr, std::string line);
  void read_pipe(Proc& p, int which);
  void on_exit(Proc& p);
  void rank_exited(int rank, int status);
  void fail(int rank, const std::string& reason);
  void begin_stop();
  void escalate();
  void check_hang();
  void report_progress();
  double now() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }

  const HeadlessRequest& m_req;
  config::TrialConfig m_config;
  HeadlessResult m_result;
  Clock::time_point m_start = Clock::now();
  fs::path m_dir;
  std::unique_ptr<store::TrialWriter> m_writer;
  std::unique_ptr<EventListener> m_listener;
  LaunchPlan m_plan;
  std::vector<std::unique_ptr<Proc>> m_procs;
  std::vector<RankState> m_ranks;
  protocol::TrialStatus m_status = protocol::TrialStatus::Running;  // -> Failed | Stopped; Done at the end
  std::string m_reason;
  int m_failed_rank = -1;
  int m_failed_status = 0;
  bool m_stopping = false;
  double m_stop_started = 0;
  int m_escalation = 0;
  int m_progress_step = -1;
  int m_first_done = -1;
  double m_first_done_s = 0;
};

bool Run::prepare(std::string* error) {
  char tmpl[] = "/tmp/tunebench-run-XXXXXX";
  if (!::mkdtemp(tmpl)) {
    *error = "cannot create a temporary folder in /tmp";
    return false;
  }
  m_dir = tmpl;
  const fs::path config_path = m_dir / "trial.json";
  {
    std::ofstream out(config_path);
    out << config::to_json(m_config).dump(2) << "\n";
    if (!out) {
      *error = "cannot write " + config_path.string();
      return false;
    }
  }
  LaunchContext ctx;
  ctx.trial_id = "trial-" + std::to_string(m_result.trial_id);
  ctx.config_path = config_path.string();
  ctx.events_socket = (m_dir / "events.sock").string();
  ctx.nonce = random_hex(8);
  if (const char* home = std::getenv("HOME")) ctx.home = home;
  ctx.link_probe = m_req.link_probe;
  if (m_config.launcher == config::Launcher::Local) {
    ctx.worker = find_worker(m_req.worker);
    if (ctx.worker.empty()) {
      *error = worker_not_found_message();
      return false;
    }
    ctx.master_port = free_local_port();
    if (ctx.master_port == 0) {
      *error = "no free TCP port on 127.0.0.1 for the rendezvous";
      return false;
    }
  } else {
    ctx.master_port = 20000 + int(std::random_device{}() % 10000);
  }
  m_listener = std::make_unique<EventListener>(EventListener::Callbacks{
      [this](protocol::Event&& e) { on_event(std::move(e)); },
      [this](const protocol::ReadProblem& p) {
        if (m_writer) m_writer->add_problem(p);
      },
      [](const std::string&) {}});
  if (!m_listener->listen_unix(ctx.events_socket, error)) return false;
  if (m_config.launcher == config::Launcher::Slurm) {
    ctx.token = random_hex(32);
    if (!m_listener->listen_tcp("0.0.0.0", 0, ctx.token, error)) return false;
    ctx.tcp_events = (m_config.event_host.empty() ? host_name() : m_config.event_host) + ":" +
                     std::to_string(m_listener->tcp_port());
  }
  try {
    m_plan = plan_launch(m_config, ctx);
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
  for (const auto& [path, text] : m_plan.files) {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    std::ofstream out(path);
    out << text;
    if (!out) {
      *error = "cannot write " + path;
      return false;
    }
  }
  return true;
}

HeadlessResult Run::run() {
  m_result.status = protocol::TrialStatus::Failed;
  m_result.exit_code = protocol::kExitConfig;
  m_config = m_req.config;
  if (!m_req.name.empty()) m_config.name = m_req.name;
  if (const auto problems = config::validate(m_config); !problems.empty()) {
    m_result.message = "invalid configuration: " + config::describe(problems);
    while (!m_result.message.empty() && m_result.message.back() == '\n') m_result.message.pop_back();
    return m_result;
  }
  m_result.exit_code = protocol::kExitInternal;
  const std::string name = m_config.name.empty() ? std::string("trial") : m_config.name;
  std::unique_ptr<store::SessionStore> session;
  try {
    if (fs::exists(m_req.session_path))
      session = std::make_unique<store::SessionStore>(store::SessionStore::open(m_req.session_path));
    else
      session = std::make_unique<store::SessionStore>(
          store::SessionStore::create(m_req.session_path, fs::path(m_req.session_path).stem().string()));
    m_result.trial_id = session->add_trial(name, config::to_json(m_config), protocol::TrialStatus::Queued, m_req.source);
    if (!m_req.tags.empty()) session->set_trial_tags(m_result.trial_id, m_req.tags);
  } catch (const std::exception& e) {
    m_result.message = e.what();
    return m_result;
  }
  std::string error;
  auto refuse = [&](const std::string& why) {
    m_result.message = why;
    try {
      session->set_trial_status(m_result.trial_id, protocol::TrialStatus::Failed, why);
    } catch (const std::exception& e) {
      m_result.message += std::string(" (and the session could not be updated: ") + e.what() + ")";
    }
    return m_result;
  };
  if (!prepare(&error)) {
    std::error_code ec;
    if (!m_dir.empty()) fs::remove_all(m_dir, ec);
    return refuse(error);
  }
  // The writer's connection owns the trial from here. Ours closes first: SQLite's WAL relies on
  // POSIX locks, which any close() of the file within this process would drop for every
  // connection, and a reader elsewhere would then take the WAL for abandoned and delete it.
  session.reset();
  try {
    m_writer = std::make_unique<store::TrialWriter>(m_req.session_path, m_result.trial_id);
  } catch (const std::exception& e) {
    m_result.message = e.what();
    return m_result;
  }

  for (const auto& spec : m_plan.processes)
    for (int r : spec.ranks)
      if (r >= int(m_ranks.size())) m_ranks.resize(size_t(r) + 1);
  for (const auto& spec : m_plan.processes) {
    auto p = std::make_unique<Proc>();
    p->spec = spec;
    p->child = ChildProcess::start(spec.argv, spec.env, &error);
    if (!p->child) {
      p->running = false;
      m_procs.push_back(std::move(p));
      fail(spec.ranks.empty() ? -1 : spec.ranks.front(), spec.label() + " could not start: " + error);
      for (int r : spec.ranks) m_ranks[size_t(r)].exited = true;
      break;
    }
    m_procs.push_back(std::move(p));
  }
  loop();

  protocol::TrialStatus status = protocol::TrialStatus::Done;
  if (m_status == protocol::TrialStatus::Running) {
    m_result.status = protocol::TrialStatus::Done;
    m_result.exit_code = 0;
  } else {
    m_result.status = m_status;
    status = m_status;
    if (m_status == protocol::TrialStatus::Stopped) m_result.exit_code = 130;
    else if (m_failed_status > 0 && m_failed_status < 128) m_result.exit_code = m_failed_status;
    else if (m_result.exit_code == protocol::kExitInternal && m_failed_status == 0) m_result.exit_code = 1;
    if (m_failed_rank >= 0 && size_t(m_failed_rank) < m_ranks.size() &&
        !m_ranks[size_t(m_failed_rank)].error_message.empty()) {
      const auto& r = m_ranks[size_t(m_failed_rank)];
      m_reason += " — " + describe_error_kind(r.error_kind) + ": " + r.error_message;
    }
  }
  m_result.message = m_reason;
  try {
    m_writer->finish(status, m_reason);
  } catch (const std::exception& e) {
    m_result.message += std::string(m_result.message.empty() ? "" : "; ") + "the session could not be updated: " + e.what();
    if (m_result.exit_code == 0) m_result.exit_code = 1;
  }
  m_writer.reset();
  // The failed process's stderr, for the caller to show (not stored: the GUI keeps it in its log).
  for (const auto& p : m_procs)
    if (m_status == protocol::TrialStatus::Failed && !p->stderr_tail.empty() &&
        std::find(p->spec.ranks.begin(), p->spec.ranks.end(), m_failed_rank) != p->spec.ranks.end()) {
      m_result.message += "\nstderr of " + p->spec.label() + ":";
      for (const auto& line : p->stderr_tail) m_result.message += "\n  " + line;
    }
  m_listener.reset();
  std::error_code ec;
  fs::remove_all(m_dir, ec);
  return m_result;
}

void Run::loop() {
  double all_exited_at = -1;
  while (true) {
    std::vector<pollfd> fds;
    m_listener->add_poll_fds(fds);
    const size_t listener_fds = fds.size();
    for (const auto& p : m_procs) {
      if (!p->child) continue;
      if (p->child->stdout_fd() >= 0) fds.push_back({p->child->stdout_fd(), POLLIN, 0});
      if (p->child->stderr_fd() >= 0) fds.push_back({p->child->stderr_fd(), POLLIN, 0});
    }
    ::poll(fds.data(), fds.size(), 50);
    m_listener->handle(std::vector<pollfd>(fds.begin(), fds.begin() + std::ptrdiff_t(listener_fds)));
    for (size_t i = listener_fds; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      for (auto& p : m_procs) {
        if (!p->child) continue;
        if (fds[i].fd == p->child->stdout_fd()) read_pipe(*p, 0);
        else if (fds[i].fd == p->child->stderr_fd()) read_pipe(*p, 1);
      }
    }
    for (auto& p : m_procs)
      if (p->running && p->child && p->child->poll_exit()) {
        // Its pipes may still hold its last lines (the rank-exit reports of an ssh node).
        while (p->child->stdout_fd() >= 0) read_pipe(*p, 0);
        while (p->child->stderr_fd() >= 0) read_pipe(*p, 1);
        p->running = false;
        on_exit(*p);
      }
    report_progress();
    const bool any_running =
        std::any_of(m_procs.begin(), m_procs.end(), [](const auto& p) { return p->running; });
    if (!any_running) {
      if (all_exited_at < 0) all_exited_at = now();
      if (m_listener->open_connections() == 0 || now() - all_exited_at > kDrainS) break;
      continue;
    }
    if (m_req.cancelled && m_status == protocol::TrialStatus::Running && m_req.cancelled()) {
      m_status = protocol::TrialStatus::Stopped;
      m_reason = "stopped by the user";
      begin_stop();
    }
    if (m_req.timeout_s > 0 && m_status == protocol::TrialStatus::Running && now() > m_req.timeout_s) {
      fail(-1, "timed out after " + std::to_string(int(m_req.timeout_s)) + " s; the trial was stopped");
      m_result.exit_code = 124;  // as timeout(1)
    }
    check_hang();
    escalate();
  }
  m_listener->close_all();
}

void Run::read_pipe(Proc& p, int which) {
  const int fd = which == 0 ? p.child->stdout_fd() : p.child->stderr_fd();
  if (fd < 0) return;
  char buf[65536];
  const ssize_t n = ::read(fd, buf, sizeof(buf));
  if (n < 0 && errno == EINTR) return;
  std::string& partial = p.partial[which];
  if (n <= 0) {
    if (!partial.empty()) on_line(p, which == 1, std::move(partial));
    partial.clear();
    which == 0 ? p.child->close_stdout() : p.child->close_stderr();
    return;
  }
  partial.append(buf, size_t(n));
  size_t start = 0;
  for (size_t nl = partial.find('\n'); nl != std::string::npos; nl = partial.find('\n', start)) {
    on_line(p, which == 1, partial.substr(start, nl - start));
    start = nl + 1;
  }
  partial.erase(0, start);
}

void Run::on_line(Proc& p, bool is_stderr, std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (is_stderr) {
    p.stderr_tail.push_back(line);
    if (p.stderr_tail.size() > kTailLines) p.stderr_tail.pop_front();
    return;
  }
  if (p.spec.kind == LaunchProcess::Kind::SshNode) {
    if (auto exit = parse_rank_exit(line)) {
      if (std::find(p.spec.ranks.begin(), p.spec.ranks.end(), exit->first) != p.spec.ranks.end())
        rank_exited(exit->first, exit->second);
    }
  } else if (p.spec.kind == LaunchProcess::Kind::SlurmBatch && p.job_id.empty()) {
    if (auto id = parse_sbatch_job_id(line)) p.job_id = *id;
  }
}

void Run::on_exit(Proc& p) {
  const int status = p.child->shell_status();
  switch (p.spec.kind) {
    case LaunchProcess::Kind::Rank:
      rank_exited(p.spec.ranks.front(), status);
      break;
    case LaunchProcess::Kind::SshNode: {
      bool missing = false;
      for (int r : p.spec.ranks) missing = missing || !m_ranks[size_t(r)].exited;
      if (missing && !m_stopping) {
        std::string why = status == 255 ? "the ssh connection failed or was lost" : describe_shell_status(status);
        if (!p.stderr_tail.empty()) why += ": " + p.stderr_tail.back();
        fail(p.spec.ranks.front(), "lost " + p.spec.label() + ": " + why);
      }
      for (int r : p.spec.ranks) m_ranks[size_t(r)].exited = true;
      break;
    }
    case LaunchProcess::Kind::SlurmStep:
    case LaunchProcess::Kind::SlurmBatch:
      if (status != 0 && !m_stopping) {
        std::string why = p.spec.label() + " failed: " + describe_shell_status(status);
        if (!p.stderr_tail.empty()) why += ": " + p.stderr_tail.back();
        fail(-1, why);
      }
      for (int r : p.spec.ranks) m_ranks[size_t(r)].exited = true;
      break;
  }
}

void Run::rank_exited(int rank, int status) {
  if (rank < 0 || size_t(rank) >= m_ranks.size() || m_ranks[size_t(rank)].exited) return;
  m_ranks[size_t(rank)].exited = true;
  m_ranks[size_t(rank)].status = status;
  if (status != 0 && !m_stopping) {
    fail(rank, "rank " + std::to_string(rank) + " failed: " + describe_shell_status(status));
    m_failed_status = status;
  }
}

void Run::fail(int rank, const std::string& reason) {
  if (m_status == protocol::TrialStatus::Running) {
    m_status = protocol::TrialStatus::Failed;
    m_reason = reason;
    m_failed_rank = rank;
  }
  begin_stop();
}

void Run::begin_stop() {
  if (m_stopping) return;
  m_stopping = true;
  m_stop_started = now();
  for (auto& p : m_procs) {
    if (!p->running) continue;
    if (p->spec.stop_by_closing_stdin) {
      p->child->close_stdin();  // the node script ends its ranks; ssh then exits
    } else if (p->spec.kind == LaunchProcess::Kind::SlurmBatch) {
      if (!p->job_id.empty()) run_command(scancel_argv(p->job_id), 10, nullptr);
      p->child->signal_group(SIGTERM);
    } else {
      p->child->signal_group(SIGTERM);
    }
  }
}

void Run::escalate() {
  if (!m_stopping) return;
  const double waited = now() - m_stop_started;
  if (m_escalation == 0 && waited > kGraceS) {
    m_escalation = 1;
    for (auto& p : m_procs)
      if (p->running) p->child->signal_group(SIGTERM);
  } else if (m_escalation == 1 && waited > 2 * kGraceS) {
    m_escalation = 2;
    for (auto& p : m_procs)
      if (p->running) p->child->signal_group(SIGKILL);
  }
}

void Run::check_hang() {
  if (m_stopping) return;
  const double t = now();
  for (size_t r = 0; r < m_ranks.size(); ++r) {
    const auto& s = m_ranks[r];
    if (s.exited) continue;
    if (s.last_event_s >= 0) {
      if (t - s.last_event_s > m_config.collective_timeout_s) {
        fail(int(r), "rank " + std::to_string(r) + " hung: no events for " + std::to_string(int(t - s.last_event_s)) +
                         " s (collective timeout " + std::to_string(int(m_config.collective_timeout_s)) +
                         " s); the trial was stopped");
        return;
      }
    } else if (t > m_config.rendezvous_timeout_s + kStartupAllowanceS) {
      fail(int(r), "rank " + std::to_string(r) + " sent no event within " + std::to_string(int(t)) +
                       " s of starting (rendezvous timeout " + std::to_string(int(m_config.rendezvous_timeout_s)) +
                       " s); the trial was stopped");
      return;
    }
  }
}

void Run::on_event(protocol::Event&& e) {
  const int rank = e.header.rank;
  if (rank >= 0 && size_t(rank) < m_ranks.size()) {
    RankState& r = m_ranks[size_t(rank)];
    r.last_event_s = now();
    if (e.is<protocol::Step>()) r.last_step = std::max<int>(r.last_step, int(e.as<protocol::Step>().step));
    if (e.is<protocol::LinkProbe>()) ++r.probe_points;
    if (e.is<protocol::Error>()) {
      r.error_kind = e.as<protocol::Error>().kind;
      r.error_message = e.as<protocol::Error>().message;
    }
  }
  if (m_writer) m_writer->add(e);
}

void Run::report_progress() {
  int done = m_ranks.empty() ? 0 : INT32_MAX;
  const bool probe = m_req.link_probe.has_value();
  for (const auto& r : m_ranks) done = std::min(done, probe ? r.probe_points : r.last_step + 1);
  if (done == m_progress_step) return;
  m_progress_step = done;
  const double t = now();
  Progress p;
  p.step = done;
  p.steps = probe ? link_probe_points(*m_req.link_probe) : int(m_config.steps);
  if (done > 0 && m_first_done < 0) {
    m_first_done = done;
    m_first_done_s = t;
  }
  if (m_first_done >= 0 && done > m_first_done) {
    const double per_step_s = (t - m_first_done_s) / (done - m_first_done);
    p.ms_per_step = per_step_s * 1000.0;
    p.eta_s = per_step_s * std::max(0, p.steps - done);
  }
  if (m_req.on_progress) m_req.on_progress(p);
}

}  // namespace

HeadlessResult run_trial(const HeadlessRequest& request) {
  try {
    return Run(request).run();
  } catch (const std::exception& e) {
    HeadlessResult r;
    r.status = protocol::TrialStatus::Failed;
    r.exit_code = 1;
    r.message = e.what();
    return r;
  }
}

}  // namespace tunebench::launch
