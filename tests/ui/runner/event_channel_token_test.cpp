// EventChannel's TCP side (SLURM ranks): a connection must present the trial's token line first;
// one without it, or with another token, is dropped and logged, and its events never arrive.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <QTemporaryDir>

#include "core/protocol/event_writer.h"
#include "ui/runner/event_channel.h"

using namespace tunebench;
using namespace tunebench::ui;

namespace {
protocol::Event log_event(int rank, const std::string& text) {
  protocol::Event e;
  e.header.rank = rank;
  e.header.trial = "t";
  e.payload = protocol::Log{"info", text};
  return e;
}
}  // namespace

TEST(EventChannelTcp, OnlyConnectionsWithTheTokenDeliverEvents) {
  QTemporaryDir dir;
  EventChannel channel;
  ASSERT_TRUE(channel.listen(dir.filePath("events.sock"))) << channel.errorString().toStdString();
  ASSERT_TRUE(channel.listenTcp("3f9a0c")) << channel.errorString().toStdString();
  ASSERT_GT(channel.tcpPort(), 0);
  std::vector<std::string> messages;
  QStringList logs;
  QObject::connect(&channel, &EventChannel::eventsArrived, [&](const EventBatch& b) {
    for (const auto& e : b) messages.push_back(e.as<protocol::Log>().message);
  });
  QObject::connect(&channel, &EventChannel::logLine, [&](const LogLine& l) { logs << l.text; });
  const std::string spec = "tcp://127.0.0.1:" + std::to_string(channel.tcpPort());
  {
    protocol::EventWriter stranger(protocol::open_line_sink(spec));
    stranger.write(log_event(0, "injected"));
    protocol::EventWriter wrong(protocol::open_line_sink(spec, "3f9a0d"));
    wrong.write(log_event(0, "injected too"));
    protocol::EventWriter rank(protocol::open_line_sink(spec, "3f9a0c"));
    rank.write(log_event(2, "genuine"));
    TB_WAIT_FOR(!messages.empty() && channel.droppedConnections() == 2, 10000);
  }
  channel.flush();
  EXPECT_EQ(messages, std::vector<std::string>{"genuine"});
  EXPECT_EQ(channel.droppedConnections(), 2);
  EXPECT_EQ(logs.filter("dropped an event connection from 127.0.0.1").size(), 2) << logs.join('\n').toStdString();
  EXPECT_EQ(logs.filter("wrong token").size(), 1);
  EXPECT_EQ(logs.filter("no token in its first line").size(), 1);
}

TEST(EventChannelTcp, NeedsAToken) {
  EventChannel channel;
  EXPECT_FALSE(channel.listenTcp(""));
}
