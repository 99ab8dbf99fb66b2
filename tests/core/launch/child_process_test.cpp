// ChildProcess: what the headless runner relies on (exit statuses, exec errors in words, the
// process group reached by one signal, the environment added on top of ours).
#include "core/launch/child_process.h"
#include "tests/core/launch/process_state.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace tl = tunebench::launch;

namespace {
// Alive and not a zombie (an orphan's zombie lingers where PID 1 does not reap, e.g. containers).
using tunebench::launch::test::running;

void wait_exit(tl::ChildProcess& c) {
  for (int i = 0; i < 400 && !c.poll_exit(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
}
}  // namespace

TEST(ChildProcess, RunsWithAddedEnvironmentAndReportsItsExit) {
  std::string out;
  EXPECT_EQ(tl::run_command({"sh", "-c", "echo \"$TB_X\"; exit 3"}, 10, &out), 3);
  EXPECT_EQ(out, "\n");
  std::string error;
  auto c = tl::ChildProcess::start({"sh", "-c", "echo \"$TB_X\" >&2; exit 4"}, {{"TB_X", "hello"}}, &error);
  ASSERT_TRUE(c) << error;
  wait_exit(*c);
  EXPECT_EQ(c->exit_code(), 4);
  EXPECT_EQ(c->shell_status(), 4);
  char buf[64] = {};
  EXPECT_EQ(::read(c->stderr_fd(), buf, sizeof(buf)), 6);
  EXPECT_STREQ(buf, "hello\n");
}

TEST(ChildProcess, AMissingProgramIsAnErrorInWords) {
  std::string error;
  EXPECT_FALSE(tl::ChildProcess::start({"/nonexistent/tunebench-worker"}, {}, &error));
  EXPECT_EQ(error, "cannot start /nonexistent/tunebench-worker: No such file or directory");
}

TEST(ChildProcess, OneSignalReachesTheWholeGroup) {
  std::string error;
  // The shell starts a grandchild and waits: a signal to the shell alone would orphan it.
  auto c = tl::ChildProcess::start({"sh", "-c", "sleep 60 & echo $!; wait"}, {}, &error);
  ASSERT_TRUE(c) << error;
  char buf[32] = {};
  ASSERT_GT(::read(c->stdout_fd(), buf, sizeof(buf) - 1), 0);
  const pid_t grandchild = std::atoi(buf);
  ASSERT_GT(grandchild, 0);
  c->signal_group(SIGTERM);
  wait_exit(*c);
  EXPECT_EQ(c->term_signal(), SIGTERM);
  EXPECT_EQ(c->shell_status(), 128 + SIGTERM);
  for (int i = 0; i < 100 && running(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(running(grandchild)) << "the grandchild outlived the group's SIGTERM";
}

TEST(ChildProcess, ClosingStdinIsSeenAsEndOfInput) {
  std::string error;
  auto c = tl::ChildProcess::start({"sh", "-c", "cat >/dev/null; exit 7"}, {}, &error);
  ASSERT_TRUE(c) << error;
  c->close_stdin();
  wait_exit(*c);
  EXPECT_EQ(c->exit_code(), 7);
}
