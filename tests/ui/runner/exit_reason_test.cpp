#include <gtest/gtest.h>

#include <csignal>

#include "ui/runner/exit_reason.h"

using namespace tunebench::ui;

TEST(ExitReason, NamesEveryContractCode) {
  EXPECT_TRUE(describe_exit_code(3).contains("out of memory"));
  EXPECT_TRUE(describe_exit_code(4).contains("communication"));
  EXPECT_TRUE(describe_exit_code(2).contains("invalid configuration"));
  EXPECT_TRUE(describe_exit_code(5).contains("unsupported"));
  EXPECT_TRUE(describe_exit_code(6).contains("event channel"));
  EXPECT_TRUE(describe_exit_code(42).contains("42"));
}

TEST(ExitReason, NamesSignals) {
  EXPECT_TRUE(describe_signal(SIGSEGV).contains("SIGSEGV"));
  EXPECT_TRUE(describe_signal(SIGKILL).contains("out-of-memory killer"));
  EXPECT_TRUE(describe_error_kind("oom").contains("out of memory"));
}
