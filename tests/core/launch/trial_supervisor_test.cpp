// TrialSupervisor on its own, with a fake clock: every input is a call with the time, every
// consequence a command, a note or the outcome. No process runs here (the adapters' shared fault
// table is supervision_faults.h, run against both runners).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>

#include "core/launch/trial_supervisor.h"

using namespace tunebench;
using namespace tunebench::launch;
using protocol::TrialStatus;

namespace {

config::TrialConfig config_of(int world) {
  config::TrialConfig c;
  c.world_size = world;
  c.steps = 10;
  c.collective_timeout_s = 2.0;
  c.rendezvous_timeout_s = 5.0;
  return c;
}

std::vector<LaunchProcess> local_ranks(int world) {
  std::vector<LaunchProcess> out;
  for (int r = 0; r < world; ++r) {
    LaunchProcess p;
    p.kind = LaunchProcess::Kind::Rank;
    p.argv = {"/bin/true"};
    p.ranks = {r};
    p.where = "this machine";
    out.push_back(p);
  }
  return out;
}

LaunchProcess ssh_node(int node, std::vector<int> ranks, const std::string& host) {
  LaunchProcess p;
  p.kind = LaunchProcess::Kind::SshNode;
  p.argv = {"ssh", host};
  p.ranks = std::move(ranks);
  p.node = node;
  p.where = host;
  p.stop_by_closing_stdin = true;
  return p;
}

// A supervisor whose processes were all started.
TrialSupervisor running(const config::TrialConfig& c, std::vector<LaunchProcess> procs, SupervisorOptions o = {}) {
  TrialSupervisor s(c, std::move(procs), std::nullopt, o);
  for (size_t i = 0; i < s.processes().size(); ++i) s.launched(i);
  return s;
}

protocol::Event step_event(int rank, int64_t step) {
  protocol::Step s;
  s.step = step;
  return protocol::Event{{protocol::kSchemaVersion, "t", rank, 0}, s};
}

protocol::Event error_event(int rank, const std::string& kind, const std::string& message,
                            nlohmann::json details = nlohmann::json::object()) {
  return protocol::Event{{protocol::kSchemaVersion, "t", rank, 0}, protocol::Error{kind, message, std::move(details)}};
}

size_t count(const Actions& a, Command::Kind kind) {
  return size_t(std::count_if(a.commands.begin(), a.commands.end(), [&](const Command& c) { return c.kind == kind; }));
}

bool has_note(const Actions& a, const std::string& text) {
  return std::any_of(a.notes.begin(), a.notes.end(), [&](const Note& n) { return n.text == text; });
}

// The whole outcome in one line of a test.
void expect_end(const TrialEnd& e, TrialStatus status, int exit_code, const std::string& reason, int failed_rank) {
  EXPECT_EQ(e.status, status) << protocol::to_string(e.status);
  EXPECT_EQ(e.exit_code, exit_code);
  EXPECT_EQ(e.reason, reason);
  EXPECT_EQ(e.failed_rank, failed_rank);
}

}  // namespace

TEST(TrialSupervisor, ARankExitingNonZeroFailsTheTrialAndStopsTheOthers) {
  auto s = running(config_of(2), local_ranks(2));
  s.event(step_event(0, 0), 0.5);
  s.event(error_event(1, "oom", "CUDA out of memory"), 0.9);
  const Actions a = s.exited(1, {3, 0}, 1.0);
  EXPECT_TRUE(has_note(a, "rank 1 exit code 3 (out of memory)"));
  ASSERT_EQ(a.commands.size(), 1u);
  EXPECT_EQ(a.commands[0].kind, Command::Kind::Terminate);
  EXPECT_EQ(a.commands[0].process, 0u);
  EXPECT_TRUE(s.stopping());
  EXPECT_FALSE(s.should_start_more());
  // Rank 0 ends from our SIGTERM: a consequence, noted as such, not a second failure.
  const Actions b = s.exited(0, {0, SIGTERM}, 1.2);
  EXPECT_TRUE(has_note(b, "rank 0 stopped because rank 1 failed (SIGTERM)"));
  expect_end(s.end(), TrialStatus::Failed, 3,
             "rank 1 failed: exit code 3 (out of memory) \u2014 out of memory: CUDA out of memory", 1);
}

TEST(TrialSupervisor, TheRankThatStoppedSteppingIsNamedInTheTimeoutOfTheOthers) {
  // Both ranks step every 0.1 s to step 4; rank 1 then sends only samples; rank 0 times out
  // waiting for it in a collective 8.3 s after rank 1's last step and exits with the communication code.
  auto s = running(config_of(2), local_ranks(2));
  for (int k = 0; k < 5; ++k) {
    s.event(step_event(0, k), 0.1 * (k + 1));
    s.event(step_event(1, k), 0.1 * (k + 1) + 0.01);
  }
  const double rank1_last = 0.51;
  s.event(error_event(0, "timeout", "no progress for 8 s waiting in a collective", {{"in_collective", true}}),
          rank1_last + 8.2);
  s.exited(0, {4, 0}, rank1_last + 8.3);
  EXPECT_NE(s.end().reason.find("; rank 1 sent no step for 8 s \u2014 timeout: no progress for 8 s waiting"),
            std::string::npos)
      << s.end().reason;
  EXPECT_EQ(s.end().failed_rank, 0);
}

TEST(TrialSupervisor, ARankWhoseOwnStepStalledNamesNoOther) {
  // The same timing, but the failing rank timed out outside any collective: it is the stalled one,
  // and rank 1, as silent in steps (it waits for rank 0), is not blamed.
  auto s = running(config_of(2), local_ranks(2));
  for (int k = 0; k < 5; ++k) {
    s.event(step_event(0, k), 0.1 * (k + 1));
    s.event(step_event(1, k), 0.1 * (k + 1) + 0.01);
  }
  s.event(error_event(0, "timeout", "no progress for 8 s outside any collective", {{"in_collective", false}}), 8.7);
  s.exited(0, {4, 0}, 8.8);
  EXPECT_EQ(s.end().reason.find("sent no step"), std::string::npos) << s.end().reason;
}

TEST(TrialSupervisor, AmongSeveralEquallySilentRanksNoneIsBlamed) {
  // Three ranks, none has stepped: rank 0 times out in a collective at 5 s; ranks 1 and 2 are as
  // silent as each other, so the supervisor cannot tell which one it waited for.
  auto s = running(config_of(3), local_ranks(3));
  s.event(error_event(0, "comm", "Gloo all-reduce failed: timed out"), 5.0);
  s.exited(0, {4, 0}, 5.1);
  EXPECT_EQ(s.end().reason.find("sent no step"), std::string::npos) << s.end().reason;
  // With two ranks the other one is the only candidate.
  auto two = running(config_of(2), local_ranks(2));
  two.event(error_event(0, "comm", "Gloo all-reduce failed: timed out"), 5.0);
  two.exited(0, {4, 0}, 5.1);
  EXPECT_NE(two.end().reason.find("; rank 1 sent no step in the 5 s since the start"), std::string::npos)
      << two.end().reason;
}

TEST(TrialSupervisor, ARankThatKeepsItsPaceIsNotCalledStalled) {
  // Rank 1 steps every 2 s (a slow model) and its last step was 2.5 s ago: within three of its
  // steps, so rank 0's failure in a collective does not blame it.
  auto s = running(config_of(2), local_ranks(2));
  for (int k = 0; k < 4; ++k) {
    s.event(step_event(0, k), 2.0 * (k + 1));
    s.event(step_event(1, k), 2.0 * (k + 1));
  }
  s.event(error_event(0, "comm", "Gloo all-reduce failed: connection reset"), 10.4);
  s.exited(0, {4, 0}, 10.5);
  EXPECT_EQ(s.end().reason.find("sent no step"), std::string::npos) << s.end().reason;
  EXPECT_EQ(s.end().failed_rank, 0);
}

TEST(TrialSupervisor, ARankKilledByASignalEndsWithExitCodeOne) {
  auto s = running(config_of(1), local_ranks(1));
  s.exited(0, {0, SIGSEGV}, 1.0);
  expect_end(s.end(), TrialStatus::Failed, 1,
             "rank 0 failed: signal 11 (SIGSEGV, segmentation fault: the rank crashed)", 0);
}

TEST(TrialSupervisor, StopTerminatesThenKillsAfterTheGracePeriod) {
  SupervisorOptions o;
  o.grace_s = 3.0;
  auto s = running(config_of(2), local_ranks(2), o);
  const Actions stop = s.stop(10.0);
  EXPECT_EQ(count(stop, Command::Kind::Terminate), 2u);
  EXPECT_TRUE(s.stop(10.5).commands.empty());  // once
  s.exited(0, {0, SIGTERM}, 11.0);
  EXPECT_TRUE(s.tick(12.9).commands.empty());
  const Actions kill = s.tick(13.0);
  ASSERT_EQ(count(kill, Command::Kind::Kill), 1u);
  EXPECT_EQ(kill.commands[0].process, 1u);  // only the one still running
  EXPECT_TRUE(has_note(kill, "rank 1 did not end within 3 s: sending SIGKILL"));
  EXPECT_TRUE(s.tick(20.0).commands.empty());  // SIGKILL once
  const Actions killed = s.exited(1, {0, SIGKILL}, 13.1);
  EXPECT_TRUE(has_note(killed, "rank 1 stopped by the user (SIGKILL after ignoring SIGTERM)"));
  expect_end(s.end(), TrialStatus::Stopped, 130, "stopped by the user", -1);
}

TEST(TrialSupervisor, StopAfterEveryProcessEndedChangesNothing) {
  auto s = running(config_of(1), local_ranks(1));
  s.exited(0, {0, 0}, 1.0);
  EXPECT_TRUE(s.stop(1.1).commands.empty());
  expect_end(s.end(), TrialStatus::Done, 0, "", -1);
}

TEST(TrialSupervisor, ARankSilentPastTheCollectiveTimeoutIsHung) {
  auto s = running(config_of(2), local_ranks(2));
  s.event(step_event(0, 0), 1.0);
  s.event(step_event(1, 0), 1.0);
  s.event(step_event(1, 1), 2.5);
  EXPECT_TRUE(s.tick(3.0).commands.empty());  // rank 0 silent for exactly the timeout: not yet
  const Actions a = s.tick(3.25);
  EXPECT_EQ(count(a, Command::Kind::Terminate), 2u);
  expect_end(s.end(), TrialStatus::Failed, 1,
             "rank 0 hung: no events for over 2 s (its collective timeout); the trial was stopped", 0);
}

TEST(TrialSupervisor, ARankThatNeverSpeaksFailsAfterRendezvousAndStartUp) {
  SupervisorOptions o;
  o.startup_allowance_s = 1.5;
  auto s = running(config_of(1), local_ranks(1), o);
  EXPECT_TRUE(s.tick(6.5).commands.empty());  // 5 s rendezvous + 1.5 s start-up
  s.tick(6.6);
  EXPECT_EQ(s.end().reason,
            "rank 0 sent no event within 6.5 s of starting (its rendezvous timeout of 5 s plus 1.5 s for start-up); "
            "the trial was stopped");
}

TEST(TrialSupervisor, ATimeoutFailsTheTrialWithExitCode124) {
  SupervisorOptions o;
  o.timeout_s = 4.0;
  auto s = running(config_of(1), local_ranks(1), o);
  s.event(step_event(0, 0), 3.0);
  EXPECT_TRUE(s.tick(3.9).commands.empty());
  EXPECT_EQ(count(s.tick(4.0), Command::Kind::Terminate), 1u);
  expect_end(s.end(), TrialStatus::Failed, 124, "timed out after 4 s; the trial was stopped", -1);
}

TEST(TrialSupervisor, TheFirstFailureNamesTheOutcome) {
  auto s = running(config_of(3), local_ranks(3));
  s.exited(2, {4, 0}, 1.0);
  s.exited(0, {1, 0}, 1.1);  // fails too, after rank 2: a consequence
  expect_end(s.end(), TrialStatus::Failed, 4,
             "rank 2 failed: exit code 4 (communication failure (NCCL/Gloo, rendezvous) or a timeout)", 2);
}

TEST(TrialSupervisor, AProgramThatCannotStartFailsTheTrialInTheSameWordsEverywhere) {
  auto procs = local_ranks(2);
  procs[0].argv = {"/nonexistent/tunebench-worker", "--config", "x"};
  TrialSupervisor s(config_of(2), procs);
  const Actions a = s.start_failed(0, 0.0, "execve: No such file or directory (the adapter's words)");
  EXPECT_FALSE(s.should_start_more());
  EXPECT_TRUE(a.commands.empty());  // nothing else was started
  EXPECT_TRUE(s.all_exited());
  EXPECT_TRUE(s.finished(0.0, 0));
  expect_end(s.end(), TrialStatus::Failed, 1, "rank 0 could not start /nonexistent/tunebench-worker: no such file", 0);
}

TEST(TrialSupervisor, WhyAProgramCannotRun) {
  EXPECT_EQ(why_cannot_run("/nonexistent/x"), "no such file");
  EXPECT_EQ(why_cannot_run("/"), "it is a folder");
  const std::string plain = ::testing::TempDir() + "/tunebench-not-executable";
  std::ofstream(plain) << "#!/bin/sh\n";
  ::chmod(plain.c_str(), 0644);
  EXPECT_EQ(why_cannot_run(plain), "not executable");
  std::remove(plain.c_str());
  EXPECT_EQ(why_cannot_run("/bin/sh"), "");
  EXPECT_EQ(why_cannot_run("sh"), "");
  EXPECT_EQ(why_cannot_run("tunebench-no-such-program"), "not found in PATH");
}

TEST(TrialSupervisor, SshNodesReportRankExitsAndALostConnectionFails) {
  config::TrialConfig c = config_of(3);
  auto s = running(c, {ssh_node(0, {0, 1}, "hostA"), ssh_node(1, {2}, "hostB")});
  // A rank-exit report split across reads, among ordinary output.
  Actions a = s.output(0, false, "hello from node 0\n@tunebench rank-", 1.0);
  a.append(s.output(0, false, "exit 1 0\n", 1.1));
  ASSERT_EQ(a.lines.size(), 1u);
  EXPECT_EQ(a.lines[0].text, "hello from node 0");
  EXPECT_TRUE(has_note(a, "rank 1 exited normally"));
  s.output(1, true, "Connection to hostB closed by remote host.\r\n", 2.0);
  const Actions lost = s.exited(1, {255, 0}, 2.1);
  EXPECT_TRUE(has_note(lost,
                       "node 1 (hostB) ended: the ssh connection failed or was lost: Connection to hostB closed "
                       "by remote host."));
  // Stopping an ssh node closes its stdin (the node script ends its ranks).
  ASSERT_EQ(lost.commands.size(), 1u);
  EXPECT_EQ(lost.commands[0].kind, Command::Kind::CloseStdin);
  EXPECT_EQ(lost.commands[0].process, 0u);
  const TrialEnd e = s.end();
  EXPECT_EQ(e.failed_rank, 2);
  EXPECT_EQ(e.reason,
            "lost node 1 (hostB): the ssh connection failed or was lost: Connection to hostB closed by "
            "remote host.");
  EXPECT_EQ(e.stderr_of, "node 1 (hostB)");
  EXPECT_EQ(e.message(), e.reason + "\nstderr of node 1 (hostB):\n  Connection to hostB closed by remote host.");
}

TEST(TrialSupervisor, ANodeWhoseRanksAllReportedMayEnd) {
  auto s = running(config_of(1), {ssh_node(0, {0}, "hostA")});
  s.output(0, false, "@tunebench rank-exit 0 0\n", 1.0);
  s.exited(0, {255, 0}, 1.1);
  EXPECT_EQ(s.end().status, TrialStatus::Done);
}

TEST(TrialSupervisor, ARemoteRankKilledBySignalIsNamed) {
  auto s = running(config_of(1), {ssh_node(0, {0}, "hostA")});
  s.output(0, false, "@tunebench rank-exit 0 137\n", 1.0);
  EXPECT_EQ(s.end().reason, "rank 0 failed: signal 9 (SIGKILL, killed: often the kernel's out-of-memory killer)");
  EXPECT_EQ(s.end().exit_code, 1);
}

TEST(TrialSupervisor, SbatchIsCancelledByItsJobId) {
  LaunchProcess p;
  p.kind = LaunchProcess::Kind::SlurmBatch;
  p.argv = {"sbatch", "--wait", "--parsable", "x.sh"};
  p.ranks = {0, 1};
  auto s = running(config_of(2), {p});
  s.output(0, false, "4242;cluster\n", 1.0);
  const Actions a = s.stop(2.0);
  ASSERT_EQ(a.commands.size(), 2u);
  EXPECT_EQ(a.commands[0].kind, Command::Kind::Scancel);
  EXPECT_EQ(a.commands[0].job_id, "4242");
  EXPECT_EQ(a.commands[1].kind, Command::Kind::Terminate);
  EXPECT_TRUE(has_note(a, "scancel 4242"));
}

TEST(TrialSupervisor, AFailedSrunFailsTheTrialWithItsLastWords) {
  LaunchProcess p;
  p.kind = LaunchProcess::Kind::SlurmStep;
  p.argv = {"srun", "sh", "-c", "x"};
  p.ranks = {0, 1};
  auto s = running(config_of(2), {p});
  s.output(0, true, "srun: error: Unable to allocate resources: Invalid partition name specified", 1.0);
  s.exited(0, {1, 0}, 1.5);  // the unterminated last line is flushed first
  EXPECT_EQ(s.end().reason,
            "srun failed: exit code 1 (internal error or crash): srun: error: Unable to "
            "allocate resources: Invalid partition name specified");
}

TEST(TrialSupervisor, TheStderrTailKeepsTheLastLinesOfTheFailedRank) {
  auto s = running(config_of(1), local_ranks(1));
  std::string text;
  for (int i = 0; i < 25; ++i) text += "line " + std::to_string(i) + "\n";
  const Actions shown = s.output(0, true, text, 0.5);
  EXPECT_EQ(shown.lines.size(), 25u);
  EXPECT_TRUE(shown.lines[0].is_stderr);
  s.exited(0, {2, 0}, 1.0);
  const TrialEnd e = s.end();
  ASSERT_EQ(e.stderr_tail.size(), TrialSupervisor::kStderrTailLines);
  EXPECT_EQ(e.stderr_tail.front(), "line 5");
  EXPECT_EQ(e.stderr_tail.back(), "line 24");
  EXPECT_EQ(e.stderr_of, "rank 0");
}

TEST(TrialSupervisor, FinishedWaitsForTheSocketsToDrainAWhileAtMost) {
  SupervisorOptions o;
  o.drain_s = 1.0;
  auto s = running(config_of(1), local_ranks(1), o);
  EXPECT_FALSE(s.finished(0.5, 0));  // still running
  s.exited(0, {0, 0}, 2.0);
  EXPECT_FALSE(s.finished(2.5, 1));  // a connection still holds lines
  EXPECT_TRUE(s.finished(2.5, 0));
  EXPECT_TRUE(s.finished(3.0, 1));  // drained long enough
}

TEST(TrialSupervisor, ProgressIsTheSlowestRankWithAnEta) {
  auto s = running(config_of(2), local_ranks(2));
  s.event(step_event(0, 0), 1.0);
  EXPECT_EQ(s.progress().step, 0);
  s.event(step_event(1, 0), 1.0);
  EXPECT_EQ(s.progress().step, 1);
  EXPECT_EQ(s.progress().steps, 10);
  EXPECT_EQ(s.progress().ms_per_step, 0.0);  // one step seen: no pace yet
  s.event(step_event(0, 1), 1.5);
  s.event(step_event(0, 2), 1.5);
  s.event(step_event(1, 1), 1.5);
  s.event(step_event(1, 2), 2.0);
  EXPECT_EQ(s.progress().step, 3);
  EXPECT_DOUBLE_EQ(s.progress().ms_per_step, 500.0);
  EXPECT_DOUBLE_EQ(s.progress().eta_s, 3.5);
}

TEST(TrialSupervisor, ALinkProbeCountsMeasuredSizes) {
  TrialSupervisor s(config_of(1), local_ranks(1), LinkProbeRange{1, 4});
  s.launched(0);
  EXPECT_EQ(s.progress().steps, 3);  // 1, 2, 4 MB
  protocol::Event probe{{protocol::kSchemaVersion, "t", 0, 0}, protocol::LinkProbe{}};
  s.event(probe, 0.1);
  s.event(probe, 0.2);
  EXPECT_EQ(s.progress().step, 2);
}

TEST(TrialSupervisor, SecondsAreWrittenWithoutTrailingZeros) {
  EXPECT_EQ(format_seconds(1), "1");
  EXPECT_EQ(format_seconds(0.5), "0.5");
  EXPECT_EQ(format_seconds(2.25), "2.25");
  EXPECT_EQ(format_seconds(300), "300");
}

TEST(TrialEnd, MessageIsTheReasonThenTheStderrTail) {
  TrialEnd e = TrialEnd::refused("invalid configuration: x", 2);
  EXPECT_EQ(e.status, TrialStatus::Failed);
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_EQ(e.message(), "invalid configuration: x");
  e.stderr_of = "rank 0";
  e.stderr_tail = {"a", "b"};
  EXPECT_EQ(e.message(), "invalid configuration: x\nstderr of rank 0:\n  a\n  b");
}
