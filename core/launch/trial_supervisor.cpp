#include "core/launch/trial_supervisor.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/launch/exit_reason.h"
#include "core/launch/link_probe.h"
#include "core/protocol/exit_codes.h"

namespace tunebench::launch {

namespace {

using protocol::TrialStatus;

bool has_rank(const LaunchProcess& p, int rank) {
  return std::find(p.ranks.begin(), p.ranks.end(), rank) != p.ranks.end();
}

// The rank a process's own lines belong to: its rank when it runs exactly one, else -1.
int log_rank(const LaunchProcess& p) { return p.ranks.size() == 1 ? p.ranks.front() : -1; }

// An exit code a trial can end with: the rank's own (1-127), else 1 (a crash, a signal, a hang).
int trial_exit_code(int code) { return code > 0 && code < 128 ? code : int(protocol::kExitInternal); }

}  // namespace

void Actions::append(Actions&& more) {
  for (auto& c : more.commands) commands.push_back(std::move(c));
  for (auto& n : more.notes) notes.push_back(std::move(n));
  for (auto& l : more.lines) lines.push_back(std::move(l));
}

std::string TrialEnd::message() const {
  std::string out = reason;
  if (!stderr_tail.empty()) {
    out += (out.empty() ? "" : "\n") + std::string("stderr of ") + stderr_of + ":";
    for (const auto& line : stderr_tail) out += "\n  " + line;
  }
  return out;
}

TrialEnd TrialEnd::refused(std::string reason, int exit_code) {
  TrialEnd e;
  e.status = TrialStatus::Failed;
  e.exit_code = exit_code;
  e.reason = std::move(reason);
  return e;
}

std::string format_seconds(double s) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f", s);
  std::string out = buf;
  while (!out.empty() && out.back() == '0') out.pop_back();
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

std::string why_cannot_run(const std::string& program) {
  if (program.empty()) return "no program was given";
  auto runnable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (program.find('/') == std::string::npos) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
      if (runnable(dir + "/" + program)) return "";
      start = end + 1;
    }
    return "not found in PATH";
  }
  struct stat st {};
  if (::stat(program.c_str(), &st) != 0) return errno == ENOENT ? "no such file" : std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return "it is a folder";
  if ((st.st_mode & 0111) == 0 || ::access(program.c_str(), X_OK) != 0) return "not executable";
  return "";
}

TrialSupervisor::TrialSupervisor(const config::TrialConfig& config, std::vector<LaunchProcess> processes,
                                 std::optional<LinkProbeRange> link_probe, SupervisorOptions options)
    : m_config(config), m_procs_spec(std::move(processes)), m_link_probe(link_probe), m_options(options) {
  m_procs.resize(m_procs_spec.size());
  size_t ranks = size_t(std::max(0, config.world_size));
  for (const auto& p : m_procs_spec)
    for (int r : p.ranks)
      if (r >= 0) ranks = std::max(ranks, size_t(r) + 1);
  m_ranks.resize(ranks);
  m_progress.steps = m_link_probe ? link_probe_points(*m_link_probe) : int(config.steps);
}

void TrialSupervisor::launched(size_t i) {
  m_procs.at(i).launched = true;
  m_procs[i].running = true;
}

bool TrialSupervisor::all_exited() const {
  return std::none_of(m_procs.begin(), m_procs.end(), [](const Proc& p) { return p.running; });
}

Actions TrialSupervisor::start_failed(size_t i, double now, const std::string& detail) {
  Actions out;
  Proc& p = m_procs.at(i);
  p.launched = true;
  p.running = false;
  const LaunchProcess& spec = m_procs_spec[i];
  for (int r : spec.ranks) m_ranks[size_t(r)].exited = true;
  std::string why = why_cannot_run(spec.argv.empty() ? std::string() : spec.argv.front());
  if (why.empty()) why = detail.empty() ? std::string("it could not be executed") : detail;
  fail(spec.ranks.empty() ? -1 : spec.ranks.front(),
       label(i) + " could not start " + (spec.argv.empty() ? std::string() : spec.argv.front()) + ": " + why,
       protocol::kExitInternal, now, out);
  if (all_exited() && m_all_exited_at < 0) m_all_exited_at = now;
  return out;
}

Actions TrialSupervisor::output(size_t i, bool is_stderr, std::string_view bytes, double now) {
  Actions out;
  std::string& partial = m_procs.at(i).partial[is_stderr ? 1 : 0];
  partial.append(bytes.data(), bytes.size());
  size_t start = 0;
  for (size_t nl = partial.find('\n'); nl != std::string::npos; nl = partial.find('\n', start)) {
    line(i, is_stderr, partial.substr(start, nl - start), now, out);
    start = nl + 1;
  }
  partial.erase(0, start);
  return out;
}

Actions TrialSupervisor::output_closed(size_t i, bool is_stderr, double now) {
  Actions out;
  std::string& partial = m_procs.at(i).partial[is_stderr ? 1 : 0];
  if (!partial.empty()) {
    std::string last = std::move(partial);
    partial.clear();
    line(i, is_stderr, std::move(last), now, out);
  }
  return out;
}

void TrialSupervisor::line(size_t i, bool is_stderr, std::string text, double now, Actions& out) {
  if (!text.empty() && text.back() == '\r') text.pop_back();
  Proc& p = m_procs[i];
  const LaunchProcess& spec = m_procs_spec[i];
  if (is_stderr) {
    p.stderr_tail.push_back(text);
    if (p.stderr_tail.size() > kStderrTailLines) p.stderr_tail.erase(p.stderr_tail.begin());
  } else if (spec.kind == LaunchProcess::Kind::SshNode) {
    // The node script's report of a rank's exit (the remote shell's status: 128 + N = signal N).
    if (const auto exit = parse_rank_exit(text)) {
      if (has_rank(spec, exit->first))
        rank_exited(exit->first, describe_shell_status(exit->second), exit->second != 0, exit->second, out, now);
      return;
    }
  } else if (spec.kind == LaunchProcess::Kind::SlurmBatch && p.job_id.empty()) {
    std::string trimmed = text;
    while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t')) trimmed.pop_back();
    if (const auto id = parse_sbatch_job_id(trimmed)) p.job_id = *id;
  }
  out.lines.push_back({i, is_stderr, std::move(text)});
}

Actions TrialSupervisor::exited(size_t i, ProcessExit exit, double now) {
  Actions out;
  out.append(output_closed(i, false, now));
  out.append(output_closed(i, true, now));
  Proc& p = m_procs.at(i);
  if (!p.running) return out;
  p.running = false;
  const LaunchProcess& spec = m_procs_spec[i];
  if (spec.kind == LaunchProcess::Kind::Rank) {
    const int rank = spec.ranks.front();
    std::string how = exit.signal > 0 ? describe_signal(exit.signal) : describe_exit_code(exit.exit_code);
    // Our own SIGTERM/SIGKILL is not "terminated from outside": say who stopped the rank and why.
    if (m_stopping && (exit.signal == SIGTERM || exit.signal == SIGKILL)) {
      const std::string sig = exit.signal == SIGTERM ? "SIGTERM" : "SIGKILL after ignoring SIGTERM";
      if (m_status == TrialStatus::Stopped)
        how = "stopped by the user (" + sig + ")";
      else if (m_status == TrialStatus::Failed && m_failed_rank != rank)
        how = (m_failed_rank >= 0 ? "stopped because rank " + std::to_string(m_failed_rank) + " failed ("
                                  : std::string("stopped because the trial failed (")) +
              sig + ")";
    }
    rank_exited(rank, how, exit.signal > 0 || exit.exit_code != 0, exit.signal > 0 ? -1 : exit.exit_code, out, now);
  } else {
    const int status = exit.signal > 0 ? 128 + exit.signal : exit.exit_code;
    std::string how = spec.kind == LaunchProcess::Kind::SshNode && status == 255
                          ? std::string("the ssh connection failed or was lost")
                          : describe_shell_status(status);
    if (!p.stderr_tail.empty()) how += ": " + p.stderr_tail.back();
    out.notes.push_back({-1, label(i) + " ended: " + how});
    bool missing = false;  // ranks whose end was not reported: the connection or the job went away
    for (int r : spec.ranks)
      if (!m_ranks[size_t(r)].exited) {
        missing = true;
        m_ranks[size_t(r)].exited = true;
      }
    const bool failed = spec.kind == LaunchProcess::Kind::SshNode ? missing : status != 0;
    if (failed && !m_stopping)
      fail(spec.ranks.empty() ? -1 : spec.ranks.front(),
           spec.kind == LaunchProcess::Kind::SshNode ? "lost " + label(i) + ": " + how : label(i) + " failed: " + how,
           protocol::kExitInternal, now, out);
  }
  if (all_exited() && m_all_exited_at < 0) m_all_exited_at = now;
  return out;
}

void TrialSupervisor::rank_exited(int rank, const std::string& how, bool failed, int code, Actions& out, double now) {
  if (rank < 0 || size_t(rank) >= m_ranks.size() || m_ranks[size_t(rank)].exited) return;
  m_ranks[size_t(rank)].exited = true;
  out.notes.push_back({rank, "rank " + std::to_string(rank) + " " + how});
  if (failed && !m_stopping)
    fail(rank, "rank " + std::to_string(rank) + " failed: " + how, trial_exit_code(code), now, out);
}

void TrialSupervisor::event(const protocol::Event& e, double now) {
  const int rank = e.header.rank;
  if (rank < 0 || size_t(rank) >= m_ranks.size()) return;
  Rank& r = m_ranks[size_t(rank)];
  r.last_event_s = now;
  if (e.is<protocol::Step>()) {
    r.last_step = std::max(r.last_step, int(e.as<protocol::Step>().step));
    if (r.first_step_s < 0) r.first_step_s = now;
    r.last_step_s = now;
    ++r.steps_seen;
  } else if (e.is<protocol::LinkProbe>()) {
    ++r.probe_points;
  } else if (e.is<protocol::Error>()) {
    const auto& err = e.as<protocol::Error>();
    r.error_kind = err.kind;
    r.error_message = err.message;
    const auto in = err.details.find("in_collective");
    r.waited_for_peers = err.kind == "comm" || (err.kind == "timeout" && in != err.details.end() &&
                                                in->is_boolean() && in->get<bool>());
  }
  update_progress(now);
}

void TrialSupervisor::update_progress(double now) {
  // Ranks move in lock step under DDP/FSDP: the trial is as far as its slowest rank.
  int done = m_ranks.empty() ? 0 : INT_MAX;
  for (const auto& r : m_ranks) done = std::min(done, m_link_probe ? r.probe_points : r.last_step + 1);
  if (done == m_progress.step) return;
  m_progress.step = done;
  if (done > 0 && m_first_done < 0) {
    m_first_done = done;
    m_first_done_s = now;
  }
  if (m_first_done >= 0 && done > m_first_done) {
    const double per_step_s = (now - m_first_done_s) / (done - m_first_done);
    m_progress.ms_per_step = per_step_s * 1000.0;
    m_progress.eta_s = per_step_s * std::max(0, m_progress.steps - done);
  }
}

std::string TrialSupervisor::stalled_rank_clause(int failing, double now) const {
  if (m_link_probe || failing < 0 || size_t(failing) >= m_ranks.size()) return "";  // a probe sends no steps
  // The running rank silent in steps the longest (since the start when it sent none), if it is the
  // only candidate or silent at least kStallS longer than the next: the one the failing rank waited for.
  int worst = -1;
  double worst_s = 0, runner_up_s = -1;
  for (size_t q = 0; q < m_ranks.size(); ++q) {
    const Rank& r = m_ranks[q];
    if (int(q) == failing || r.exited) continue;
    const double since = r.last_step_s >= 0 ? r.last_step_s : 0.0;  // 0: the trial's start
    const double pace = r.steps_seen >= 2 ? (r.last_step_s - r.first_step_s) / (r.steps_seen - 1) : 0.0;
    const double silent = now - since;
    if (silent < kStallS || silent < 3 * pace) continue;
    if (silent > worst_s) {
      runner_up_s = worst_s > 0 ? worst_s : runner_up_s;
      worst = int(q), worst_s = silent;
    } else {
      runner_up_s = std::max(runner_up_s, silent);
    }
  }
  if (worst < 0 || (runner_up_s >= 0 && worst_s - runner_up_s < kStallS)) return "";
  const std::string seconds = format_seconds(std::floor(worst_s));
  return "; rank " + std::to_string(worst) +
         (m_ranks[size_t(worst)].last_step_s >= 0 ? " sent no step for " + seconds + " s"
                                                  : " sent no step in the " + seconds + " s since the start");
}

void TrialSupervisor::fail(int rank, std::string reason, int exit_code, double now, Actions& out) {
  if (m_status == TrialStatus::Done) {
    m_status = TrialStatus::Failed;
    // Taken now, while the others still run; said by end() only if the failing rank waited in a
    // collective, which its error event (possibly read after its exit) tells.
    if (rank >= 0) m_stalled_clause = stalled_rank_clause(rank, now);
    m_reason = std::move(reason);
    m_failed_rank = rank;
    m_exit_code = exit_code;
  }
  begin_stop(now, out);
}

Actions TrialSupervisor::stop(double now) {
  Actions out;
  if (m_stopping || all_exited()) return out;
  if (m_status == TrialStatus::Done) {
    m_status = TrialStatus::Stopped;
    m_reason = "stopped by the user";
    m_exit_code = 130;  // as a shell reports SIGINT
  }
  begin_stop(now, out);
  return out;
}

void TrialSupervisor::begin_stop(double now, Actions& out) {
  if (m_stopping) return;
  m_stopping = true;
  m_stop_started = now;
  for (size_t i = 0; i < m_procs.size(); ++i) {
    if (!m_procs[i].running) continue;
    const LaunchProcess& spec = m_procs_spec[i];
    if (spec.stop_by_closing_stdin) {
      out.commands.push_back({Command::Kind::CloseStdin, i, {}});  // the node script ends its ranks; ssh exits
      continue;
    }
    if (spec.kind == LaunchProcess::Kind::SlurmBatch && !m_procs[i].job_id.empty()) {
      out.notes.push_back({-1, "scancel " + m_procs[i].job_id});
      out.commands.push_back({Command::Kind::Scancel, i, m_procs[i].job_id});
    }
    out.commands.push_back({Command::Kind::Terminate, i, {}});
  }
}

Actions TrialSupervisor::tick(double now) {
  Actions out;
  if (m_stopping) {
    if (!m_killed && now - m_stop_started >= m_options.grace_s) {
      m_killed = true;
      for (size_t i = 0; i < m_procs.size(); ++i) {
        if (!m_procs[i].running) continue;
        out.notes.push_back({log_rank(m_procs_spec[i]), label(i) + " did not end within " +
                                                            format_seconds(m_options.grace_s) + " s: sending SIGKILL"});
        out.commands.push_back({Command::Kind::Kill, i, {}});
      }
    }
    return out;
  }
  if (all_exited()) return out;
  if (m_options.timeout_s > 0 && now >= m_options.timeout_s) {
    fail(-1, "timed out after " + format_seconds(m_options.timeout_s) + " s; the trial was stopped", 124, now, out);
    return out;
  }
  for (size_t r = 0; r < m_ranks.size(); ++r) {
    const Rank& s = m_ranks[r];
    if (s.exited) continue;
    const std::string rank = "rank " + std::to_string(r);
    if (s.last_event_s >= 0) {
      if (now - s.last_event_s > m_config.collective_timeout_s) {
        fail(int(r),
             rank + " hung: no events for over " + format_seconds(m_config.collective_timeout_s) +
                 " s (its collective timeout); the trial was stopped",
             protocol::kExitInternal, now, out);
        return out;
      }
    } else if (now > m_config.rendezvous_timeout_s + m_options.startup_allowance_s) {
      fail(int(r),
           rank + " sent no event within " +
               format_seconds(m_config.rendezvous_timeout_s + m_options.startup_allowance_s) +
               " s of starting (its rendezvous timeout of " + format_seconds(m_config.rendezvous_timeout_s) +
               " s plus " + format_seconds(m_options.startup_allowance_s) + " s for start-up); the trial was stopped",
           protocol::kExitInternal, now, out);
      return out;
    }
  }
  return out;
}

bool TrialSupervisor::finished(double now, int open_connections) {
  if (!all_exited()) return false;
  if (m_all_exited_at < 0) m_all_exited_at = now;
  return open_connections == 0 || now - m_all_exited_at >= m_options.drain_s;
}

TrialEnd TrialSupervisor::end() const {
  TrialEnd e;
  e.status = m_status;
  e.exit_code = m_status == TrialStatus::Done ? 0 : m_exit_code;
  e.reason = m_reason;
  e.failed_rank = m_failed_rank;
  if (m_status != TrialStatus::Failed || m_failed_rank < 0 || size_t(m_failed_rank) >= m_ranks.size()) return e;
  const Rank& r = m_ranks[size_t(m_failed_rank)];
  if (r.waited_for_peers) e.reason += m_stalled_clause;
  if (!r.error_message.empty()) e.reason += " \u2014 " + describe_error_kind(r.error_kind) + ": " + r.error_message;
  for (size_t i = 0; i < m_procs_spec.size(); ++i)
    if (has_rank(m_procs_spec[i], m_failed_rank) && !m_procs[i].stderr_tail.empty()) {
      e.stderr_of = label(i);
      e.stderr_tail = m_procs[i].stderr_tail;
    }
  return e;
}

}  // namespace tunebench::launch
