// TrialRunner with the ssh launcher: the processes of launch::plan_launch (one ssh per host, the
// node script) driven through a stand-in ssh (fake_ssh.sh) and the fake worker: ranks on two
// "hosts" run to the end, Stop ends every remote rank through the closed stdin, and a connection
// that dies fails the trial naming the node.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>

#include "tests/ui/runner/runner_test_util.h"
#include "tests/ui/wait_for.h"
#include "ui/runner/trial_runner.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {

TrialRequest ssh_request(const QString& id, int steps) {
  TrialRequest r = fake_request(id, 2, steps);
  r.config.launcher = config::Launcher::Ssh;
  EXPECT_FALSE(config::parse_ssh_hosts("hostA ranks=1; hostB ranks=1", r.config.ssh_hosts));
  r.config.ssh_command = TUNEBENCH_TEST_DATA_DIR "/../core/launch/fake_ssh.sh";
  r.config.remote_worker = TUNEBENCH_FAKE_WORKER;
  return r;
}

// Processes whose command line names this trial (the node scripts' workers).
int workers_of(const QString& id) {
  int n = 0;
  for (const QString& pid : QDir("/proc").entryList(QDir::Dirs)) {
    QFile f("/proc/" + pid + "/cmdline");
    if (!f.open(QIODevice::ReadOnly)) continue;
    const QByteArray cmd = f.readAll();
    QFile st("/proc/" + pid + "/stat");
    st.open(QIODevice::ReadOnly);
    const QByteArray stat = st.readAll();
    const bool zombie = stat.mid(stat.lastIndexOf(')') + 2, 1) == "Z";
    if (!zombie && cmd.contains("tunebench-fake-worker") && cmd.contains(QByteArray("\0--trial\0", 9) + id.toUtf8()))
      ++n;
  }
  return n;
}

struct Outcome {
  int finished = 0;
  int steps = 0;
  std::set<int> ranks;
  QStringList logs;
  TrialOutcome outcome;
  explicit Outcome(TrialRunner& runner) {
    QObject::connect(&runner, &TrialRunner::eventsArrived, [this](const EventBatch& b) {
      for (const auto& e : b) {
        if (e.is<protocol::Step>()) ++steps;
        ranks.insert(e.header.rank);
      }
    });
    QObject::connect(&runner, &TrialRunner::logLine, [this](const LogLine& l) { logs << l.text; });
    QObject::connect(&runner, &TrialRunner::finished, [this](const TrialOutcome& o) {
      outcome = o;
      ++finished;
    });
  }
};

}  // namespace

TEST(SshRunner, RanksOnTwoHostsRunToTheEnd) {
  TrialRunner runner;
  Outcome rec(runner);
  ASSERT_TRUE(runner.start(ssh_request("ssh-ok", 5)));
  TB_WAIT_FOR(rec.finished == 1, kTimeoutMs);
  EXPECT_EQ(rec.outcome.status, protocol::TrialStatus::Done) << rec.outcome.reason.toStdString();
  EXPECT_EQ(rec.steps, 10);
  EXPECT_EQ(rec.ranks, (std::set<int>{0, 1}));
  EXPECT_EQ(runner.pids().size(), 2u);  // one ssh per host
  EXPECT_EQ(rec.logs.filter("rank 1 exited normally").size(), 1) << rec.logs.join('\n').toStdString();
  EXPECT_EQ(rec.logs.filter("starting 2 rank(s) through ssh").size(), 1);
}

TEST(SshRunner, StopEndsEveryRemoteRank) {
  FakeMode slow("ok");
  qputenv("TUNEBENCH_FAKE_STEP_MS", "200");
  TrialRunner runner;
  runner.setGraceMs(5000);
  Outcome rec(runner);
  ASSERT_TRUE(runner.start(ssh_request("ssh-stop", 1000)));
  TB_WAIT_FOR(rec.steps >= 4, kTimeoutMs);
  EXPECT_EQ(workers_of("ssh-stop"), 2);
  runner.stop();
  TB_WAIT_FOR(rec.finished == 1, kTimeoutMs);
  qunsetenv("TUNEBENCH_FAKE_STEP_MS");
  EXPECT_EQ(rec.outcome.status, protocol::TrialStatus::Stopped);
  EXPECT_EQ(rec.logs.filter("did not end within").size(), 0) << "closing stdin did not stop the node";
  TB_WAIT_FOR(workers_of("ssh-stop") == 0, 10000);
}

TEST(SshRunner, ALostConnectionFailsTheTrialNamingTheNode) {
  qputenv("TUNEBENCH_FAKE_STEP_MS", "200");
  TrialRunner runner;
  Outcome rec(runner);
  ASSERT_TRUE(runner.start(ssh_request("ssh-lost", 1000)));
  TB_WAIT_FOR(rec.steps >= 4, kTimeoutMs);
  ::kill(pid_t(runner.pids()[1]), SIGKILL);  // node 1's connection dies
  TB_WAIT_FOR(rec.finished == 1, kTimeoutMs);
  qunsetenv("TUNEBENCH_FAKE_STEP_MS");
  EXPECT_EQ(rec.outcome.status, protocol::TrialStatus::Failed);
  EXPECT_TRUE(rec.outcome.reason.startsWith("lost node 1 (hostB)")) << rec.outcome.reason.toStdString();
  EXPECT_EQ(rec.outcome.failed_rank, 1);
  TB_WAIT_FOR(workers_of("ssh-lost") == 0, 15000);
}
