// One table of faults, run against both runners: the headless run_trial
// (tests/core/launch/headless_faults_test.cpp) and the GUI's TrialRunner
// (tests/ui/runner/runner_faults_test.cpp). Each row is a fault injected into the fake worker (or
// the fake ssh) and the outcome it must end with, word for word: status, exit code, reason,
// failed rank and a line of the failed process's stderr. Both tests compare against these rows, so
// a fault that read differently in the window and on the command line would fail one of them.
// Qt-free: plain setenv, the fake worker and the fake ssh.
#pragma once

#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "core/config/trial_config.h"
#include "core/protocol/trial_status.h"

namespace tunebench::test {

struct FaultCase {
  std::string name;  // a gtest name
  // The fault.
  std::string fake_mode = "ok";  // TUNEBENCH_FAKE_MODE of the fake worker
  int fake_rank = 0;             // TUNEBENCH_FAKE_RANK: the rank that misbehaves
  int fake_at_step = 2;          // TUNEBENCH_FAKE_AT_STEP
  int world = 1;
  int steps = 20;
  double collective_timeout_s = 0;  // 0: the config's default
  std::string worker;               // instead of the fake worker (a missing binary); "": the fake worker
  bool invalid_config = false;      // warm-up longer than the run: refused before launch
  std::string ssh_lose;             // ssh launcher over hostA and hostB; this host's connection is lost
  int stop_at_step = -1;            // Stop (Ctrl-C) once every rank has done this many steps
  // The outcome, the same from both runners.
  protocol::TrialStatus status = protocol::TrialStatus::Done;
  int exit_code = 0;
  std::string reason;
  int failed_rank = -1;
  std::string stderr_has;  // a substring of the failed process's stderr tail ("": no tail checked)

  // Building a row in one expression.
  explicit FaultCase(std::string n) : name(std::move(n)) {}
  FaultCase& mode(std::string m, int rank = 0, int at_step = 2) {
    fake_mode = std::move(m);
    fake_rank = rank;
    fake_at_step = at_step;
    return *this;
  }
  FaultCase& ranks(int n, int steps_to_run) {
    world = n;
    steps = steps_to_run;
    return *this;
  }
  FaultCase& fails(int code, std::string why, int rank, std::string stderr_line = "") {
    status = protocol::TrialStatus::Failed;
    exit_code = code;
    reason = std::move(why);
    failed_rank = rank;
    stderr_has = std::move(stderr_line);
    return *this;
  }
};

inline const std::vector<FaultCase>& fault_cases() {
  static const std::vector<FaultCase> cases = [] {
    constexpr int kLong = 100000;  // steps no rank reaches: the trial must be ended
    std::vector<FaultCase> v;
    v.push_back(
        FaultCase("RankExitsNonZero")
            .mode("exit:3", 1)
            .ranks(2, kLong)
            .fails(3, "rank 1 failed: exit code 3 (out of memory) \u2014 out of memory: fake failure with exit code 3",
                   1, "fake worker: failing with exit code 3"));
    v.push_back(FaultCase("RankKilledBySignal")
                    .mode("crash", 1)
                    .ranks(2, kLong)
                    .fails(1, "rank 1 failed: signal 11 (SIGSEGV, segmentation fault: the rank crashed)", 1,
                           "about to dereference a null pointer"));
    FaultCase hang =
        FaultCase("RankHangsPastTheCollectiveTimeout")
            .mode("hang", 0, 1)
            .ranks(1, 100)
            .fails(1, "rank 0 hung: no events for over 1 s (its collective timeout); the trial was stopped", 0,
                   "fake worker: hanging");
    hang.collective_timeout_s = 1.0;
    v.push_back(hang);
    // Rank 1 stops stepping at step 2; rank 0 times out waiting for it 2.5 s later: its failure
    // names rank 1 (issue 40).
    FaultCase stall = FaultCase("StalledRankIsNamedInTheOthersTimeout")
                          .mode("stall", 1, 2)
                          .ranks(2, kLong)
                          .fails(4,
                                 "rank 0 failed: exit code 4 (communication failure (NCCL/Gloo, rendezvous) or a "
                                 "timeout); rank 1 sent no step for 2 s \u2014 timeout: no progress: waiting for "
                                 "another rank in a collective",
                                 0, "fake worker: timed out waiting for a peer");
    stall.collective_timeout_s = 2.0;
    v.push_back(stall);
    FaultCase stop = FaultCase("Stop").ranks(2, kLong);
    stop.stop_at_step = 2;
    stop.status = protocol::TrialStatus::Stopped;
    stop.exit_code = 130;
    stop.reason = "stopped by the user";
    v.push_back(stop);
    FaultCase missing =
        FaultCase("MissingBinary").fails(1, "rank 0 could not start /nonexistent/tunebench-worker: no such file", 0);
    missing.worker = "/nonexistent/tunebench-worker";
    v.push_back(missing);
    FaultCase invalid =
        FaultCase("InvalidConfig")
            .fails(2, "invalid configuration: warmup: warm-up (5) must leave at least one measured step of 3", -1);
    invalid.invalid_config = true;
    v.push_back(invalid);
    // A malformed event line is a problem noted, never a failure: the trial ends done.
    v.push_back(FaultCase("MalformedEventLine").mode("garbage").ranks(2, 5));
    FaultCase lost =
        FaultCase("LostSshConnection")
            .ranks(2, kLong)
            .fails(1,
                   "lost node 1 (hostB): the ssh connection failed or was lost: Connection to hostB closed "
                   "by remote host.",
                   1, "Connection to hostB closed by remote host.");
    lost.ssh_lose = "hostB";
    v.push_back(lost);
    return v;
  }();
  return cases;
}

// gtest's parameter names and failure messages.
inline std::ostream& operator<<(std::ostream& out, const FaultCase& c) { return out << c.name; }
inline std::string fault_name(const FaultCase& c) { return c.name; }

// The trial of a row: the fake worker on this machine, or over the fake ssh on two "hosts".
inline config::TrialConfig fault_config(const FaultCase& c, const std::string& fake_worker,
                                        const std::string& fake_ssh) {
  config::TrialConfig t;
  t.device = config::Device::Cpu;
  t.strategy = c.world > 1 ? config::Strategy::Ddp : config::Strategy::Single;
  t.world_size = c.world;
  t.steps = c.steps;
  t.warmup = 1;
  if (c.collective_timeout_s > 0) t.collective_timeout_s = c.collective_timeout_s;
  if (c.invalid_config) {
    t.steps = 3;
    t.warmup = 5;
  }
  if (!c.ssh_lose.empty()) {
    t.launcher = config::Launcher::Ssh;
    config::parse_ssh_hosts("hostA ranks=1; hostB ranks=1", t.ssh_hosts);
    t.ssh_command = fake_ssh;
    t.remote_worker = fake_worker;
  }
  return t;
}

// The row's fault in the environment the runners pass on to the fake worker and the fake ssh, for
// as long as this object lives.
class FaultEnvironment {
 public:
  explicit FaultEnvironment(const FaultCase& c) {
    set("TUNEBENCH_FAKE_MODE", c.fake_mode);
    set("TUNEBENCH_FAKE_RANK", std::to_string(c.fake_rank));
    set("TUNEBENCH_FAKE_AT_STEP", std::to_string(c.fake_at_step));
    if (!c.ssh_lose.empty()) set("TUNEBENCH_FAKE_SSH_LOSE", c.ssh_lose);
  }
  ~FaultEnvironment() {
    for (const char* name :
         {"TUNEBENCH_FAKE_MODE", "TUNEBENCH_FAKE_RANK", "TUNEBENCH_FAKE_AT_STEP", "TUNEBENCH_FAKE_SSH_LOSE"})
      ::unsetenv(name);
  }
  FaultEnvironment(const FaultEnvironment&) = delete;
  FaultEnvironment& operator=(const FaultEnvironment&) = delete;

 private:
  static void set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }
};

}  // namespace tunebench::test
