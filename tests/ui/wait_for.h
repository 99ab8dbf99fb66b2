// Waiting in gtest-based Qt tests. QTRY_* macros report to QTestLib and just `return` on timeout,
// which gtest would count as a pass; TB_WAIT_FOR fails the test instead.
#pragma once

#include <gtest/gtest.h>

#include <QTest>

// How long a UI test waits for a condition before it fails (a bound, never a delay: the waits end
// as soon as the condition holds, so a loaded machine only makes them slower, not wrong).
inline constexpr int kTimeoutMs = 60000;

#define TB_WAIT_FOR(cond, timeout_ms) \
  ASSERT_TRUE(QTest::qWaitFor([&] { return bool(cond); }, (timeout_ms))) << "timed out waiting for: " #cond

#define TB_EXPECT_WAIT_FOR(cond, timeout_ms) \
  EXPECT_TRUE(QTest::qWaitFor([&] { return bool(cond); }, (timeout_ms))) << "timed out waiting for: " #cond
