// The streaming reader: framing across arbitrary chunks, and every kind of bad input reported
// through the listener instead of thrown.
#include <gtest/gtest.h>

#include <random>

#include "core/protocol/event_reader.h"
#include "core/protocol/event_writer.h"

namespace tp = tunebench::protocol;

namespace {

struct Collect final : tp::ReadListener {
  std::vector<tp::Event> events;
  std::vector<tp::ReadProblem> problems;
  void on_event(tp::Event&& e) override { events.push_back(std::move(e)); }
  void on_problem(const tp::ReadProblem& p) override { problems.push_back(p); }
};

tp::Event step_event(int rank, int64_t step) {
  tp::Step s;
  s.step = step;
  s.step_ms = 10.0 + step;
  s.intervals = {{tp::Lane::Compute, tp::Phase::Forward, 1, 2, "", 0, 0}};
  tp::Event e;
  e.header.rank = rank;
  e.header.t_us = 100 + step;
  e.payload = s;
  return e;
}

std::string stream_of(int n, int ranks = 1) {
  std::string all;
  for (int i = 0; i < n; ++i) all += tp::format_line(step_event(i % ranks, i));
  return all;
}

}  // namespace

TEST(EventReader, WholeStreamInOneChunk) {
  Collect c;
  tp::EventReader r(c);
  r.feed(stream_of(5));
  r.finish();
  ASSERT_EQ(c.events.size(), 5u);
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(c.events[4].as<tp::Step>().step, 4);
  EXPECT_EQ(r.lines(), 5);
}

TEST(EventReader, ByteByByteEqualsWhole) {
  const std::string all = stream_of(20);
  Collect c;
  tp::EventReader r(c);
  for (char ch : all) r.feed(std::string_view(&ch, 1));
  r.finish();
  ASSERT_EQ(c.events.size(), 20u);
  EXPECT_TRUE(c.problems.empty());
  for (int i = 0; i < 20; ++i) EXPECT_EQ(c.events[i].as<tp::Step>().step, i);
}

TEST(EventReader, RandomSplitsAndMergedChunks) {
  const std::string all = stream_of(200);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    Collect c;
    tp::EventReader r(c);
    size_t pos = 0;
    while (pos < all.size()) {
      // chunk sizes from 1 byte to several lines at once
      const size_t n = std::min(all.size() - pos, static_cast<size_t>(rng() % 700 + 1));
      r.feed(std::string_view(all).substr(pos, n));
      pos += n;
    }
    r.finish();
    ASSERT_EQ(c.events.size(), 200u) << "trial " << trial;
    EXPECT_TRUE(c.problems.empty());
    for (int i = 0; i < 200; ++i) ASSERT_EQ(c.events[i].as<tp::Step>().step, i);
  }
}

TEST(EventReader, TruncatedLastLineIsReportedNotDelivered) {
  std::string all = stream_of(3);
  all += tp::format_line(step_event(0, 3)).substr(0, 25);  // writer killed mid-line
  Collect c;
  tp::EventReader r(c);
  r.feed(all);
  EXPECT_EQ(c.events.size(), 3u);
  EXPECT_TRUE(c.problems.empty()) << "a partial line is not a problem until the stream ends";
  r.finish();
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].kind, tp::ReadProblem::Kind::TruncatedLine);
  EXPECT_EQ(c.problems[0].line_number, 4);
  EXPECT_EQ(c.events.size(), 3u);
}

TEST(EventReader, TruncatedLineInTheMiddleIsBadJsonAndReadingGoesOn) {
  std::string line = tp::format_line(step_event(0, 1));
  std::string all = tp::format_line(step_event(0, 0)) + line.substr(0, line.size() / 2) + "\n" +
                    tp::format_line(step_event(0, 2));
  Collect c;
  tp::EventReader r(c);
  r.feed(all);
  r.finish();
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[1].as<tp::Step>().step, 2);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].kind, tp::ReadProblem::Kind::BadJson);
  EXPECT_EQ(c.problems[0].line_number, 2);
}

TEST(EventReader, UnknownTypeIsKeptAsAProblemWithItsText) {
  Collect c;
  tp::EventReader r(c);
  r.feed("{\"v\":1,\"type\":\"telepathy\",\"rank\":0,\"t_us\":1}\n");
  r.feed(tp::format_line(step_event(0, 0)));
  r.finish();
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].kind, tp::ReadProblem::Kind::UnknownType);
  EXPECT_NE(c.problems[0].excerpt.find("telepathy"), std::string::npos);
  EXPECT_EQ(c.events.size(), 1u);
}

TEST(EventReader, NewerSchemaIsReadBestEffortAndReportedOnce) {
  Collect c;
  tp::EventReader r(c);
  for (int i = 0; i < 3; ++i)
    r.feed("{\"v\":7,\"type\":\"log\",\"rank\":1,\"t_us\":5,\"level\":\"info\",\"message\":\"hi\","
           "\"hologram\":{\"x\":1}}\n");
  r.finish();
  ASSERT_EQ(c.events.size(), 3u);
  EXPECT_EQ(c.events[0].header.v, 7);
  EXPECT_EQ(c.events[0].as<tp::Log>().message, "hi");
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].kind, tp::ReadProblem::Kind::NewerVersion);
  EXPECT_EQ(r.problems(), 0) << "a newer version is a notice, not a bad line";
}

TEST(EventReader, GarbageAndNulBytesNeverCrash) {
  Collect c;
  tp::EventReader r(c);
  std::string garbage = "\x01\x02\xff\xfe not json at all {{{\n";
  garbage += std::string("{\"v\":1,\"type\":\"log\",\0\"message\":\"x\"}\n", 37);
  garbage += "[1,2,3]\n";
  garbage += "\"a string\"\n";
  garbage += "{\"v\":1}\n";                                     // no type
  garbage += "{\"v\":\"one\",\"type\":\"log\"}\n";              // wrong type of v
  garbage += "{\"v\":1,\"type\":\"step\",\"step\":\"x\"}\n";     // wrong field type
  garbage += "{\"v\":1,\"type\":\"step\",\"step\":1,\"intervals\":[{\"lane\":\"moon\",\"phase\":\"forward\","
             "\"start_us\":1,\"end_us\":2}]}\n";                // unknown lane
  garbage += "{\"v\":0,\"type\":\"log\"}\n";                    // version 0
  r.feed(garbage);
  std::mt19937 rng(1);
  std::string noise(64 * 1024, '\0');
  for (auto& ch : noise) ch = static_cast<char>(rng());
  r.feed(noise);
  r.feed("\n");
  r.feed(tp::format_line(step_event(0, 9)));
  r.finish();
  ASSERT_FALSE(c.events.empty());
  EXPECT_EQ(c.events.back().as<tp::Step>().step, 9) << "the reader recovers after garbage";
  EXPECT_GE(c.problems.size(), 9u);
  for (const auto& p : c.problems) {
    EXPECT_LE(p.excerpt.size(), tp::EventReader::kExcerptBytes);
    EXPECT_FALSE(p.message.empty());
  }
}

TEST(EventReader, TenMegabyteLineParses) {
  tp::Log log{"info", std::string(10 << 20, 'x')};
  tp::Event e;
  e.payload = log;
  Collect c;
  tp::EventReader r(c);
  const std::string line = tp::format_line(e);
  for (size_t pos = 0; pos < line.size(); pos += 65536) r.feed(std::string_view(line).substr(pos, 65536));
  r.finish();
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].as<tp::Log>().message.size(), size_t(10 << 20));
}

TEST(EventReader, LineOverTheLimitIsSkippedAndTheNextOneRead) {
  Collect c;
  tp::EventReader r(c, 1024);
  r.feed(std::string(600, 'y'));
  r.feed(std::string(600, 'y'));  // limit crossed in the second chunk
  r.feed(std::string(5000, 'y'));
  r.feed("\n");
  r.feed(tp::format_line(step_event(0, 1)));
  r.finish();
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].kind, tp::ReadProblem::Kind::LineTooLong);
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].as<tp::Step>().step, 1);
}

TEST(EventReader, InterleavedRanksKeepTheirOrder) {
  const std::string all = stream_of(64, 8);
  Collect c;
  tp::EventReader r(c);
  r.feed(all);
  r.finish();
  ASSERT_EQ(c.events.size(), 64u);
  std::vector<int64_t> last(8, -1);
  for (const auto& e : c.events) {
    const int rank = e.header.rank;
    ASSERT_GE(rank, 0);
    ASSERT_LT(rank, 8);
    EXPECT_GT(e.as<tp::Step>().step, last[rank]);
    last[rank] = e.as<tp::Step>().step;
  }
  for (int rank = 0; rank < 8; ++rank) EXPECT_EQ(last[rank], 56 + rank);
}

TEST(EventReader, CrLfAndBlankLinesAreTolerated) {
  std::string line = tp::format_line(step_event(0, 0));
  line.insert(line.size() - 1, "\r");
  Collect c;
  tp::EventReader r(c);
  r.feed("\n\n   \n" + line);
  r.finish();
  EXPECT_EQ(c.events.size(), 1u);
  EXPECT_TRUE(c.problems.empty());
}

TEST(EventReader, DeeplyNestedJsonIsRefusedNotAStackOverflow) {
  Collect c;
  tp::EventReader r(c);
  std::string line = "{\"v\":1,\"type\":\"error\",\"kind\":\"x\",\"details\":";
  line += std::string(600000, '[') + std::string(600000, ']') + "}\n";
  r.feed(line);
  // brackets inside strings do not count
  r.feed("{\"v\":1,\"type\":\"log\",\"message\":\"" + std::string(1000, '[') + "\"}\n");
  r.finish();
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].kind, tp::ReadProblem::Kind::BadJson);
  EXPECT_NE(c.problems[0].message.find("nested"), std::string::npos);
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].as<tp::Log>().message.size(), 1000u);
}
