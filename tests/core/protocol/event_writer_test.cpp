// Writers: sinks from a spec, concurrent writers never interleave lines.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/protocol/event_reader.h"
#include "core/protocol/event_writer.h"

namespace tp = tunebench::protocol;

namespace {
std::string temp_path(const char* name) {
  return ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid());
}
}  // namespace

TEST(EventWriter, FileSinkWritesParsableLinesFromManyThreads) {
  const std::string path = temp_path("events.jsonl");
  std::remove(path.c_str());
  {
    tp::EventWriter writer(tp::open_line_sink("file:" + path));
    writer.set_identity("trial-x", 2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&writer, t] {
        for (int i = 0; i < 250; ++i)
          writer.write_payload(tp::Log{"info", "thread " + std::to_string(t) + std::string(300, 'p')});
      });
    for (auto& th : threads) th.join();
    EXPECT_TRUE(writer.ok());
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  struct Count final : tp::ReadListener {
    int events = 0, problems = 0;
    void on_event(tp::Event&& e) override {
      ++events;
      EXPECT_EQ(e.header.trial, "trial-x");
      EXPECT_EQ(e.header.rank, 2);
      EXPECT_GT(e.header.t_us, 0);
    }
    void on_problem(const tp::ReadProblem&) override { ++problems; }
  } count;
  tp::EventReader reader(count);
  reader.feed(ss.str());
  reader.finish();
  EXPECT_EQ(count.events, 1000);
  EXPECT_EQ(count.problems, 0);
  std::remove(path.c_str());
}

TEST(EventWriter, BadSpecsThrowReadableErrors) {
  EXPECT_THROW(tp::open_line_sink("carrier-pigeon:1"), std::runtime_error);
  EXPECT_THROW(tp::open_line_sink("file:/nonexistent-dir/x/y.jsonl"), std::runtime_error);
  EXPECT_THROW(tp::open_line_sink("unix:/nonexistent-dir/sock"), std::runtime_error);
  try {
    tp::open_line_sink("tcp://no-port-here");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("HOST:PORT"), std::string::npos);
  }
  EXPECT_NO_THROW(tp::open_line_sink("none"));
}

TEST(EventWriter, FailedWritesAreReportedNotFatal) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);  // reader gone
  std::signal(SIGPIPE, SIG_IGN);
  tp::EventWriter writer(std::make_unique<tp::FdLineSink>(fds[1], true));
  writer.write_payload(tp::Log{"info", "nobody listens"});
  EXPECT_FALSE(writer.ok());
}
