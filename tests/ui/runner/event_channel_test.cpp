// EventChannel's read bound (issue 16): every parse of a socket, flush() and a rank's disconnect
// with megabytes still buffered included, takes at most kMaxReadBytes; no event is lost or cut.
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>

#include <QTemporaryDir>

#include "core/protocol/events.h"
#include "ui/runner/event_channel.h"

using namespace tunebench;
using namespace tunebench::ui;

namespace {
// A rank in a thread: connects, writes `lines` as fast as the socket takes them, closes.
void flood(const std::string& path, const std::string& lines) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  int big = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));  // as much in flight as the kernel allows
  size_t done = 0;
  while (done < lines.size()) {
    const ssize_t n = ::write(fd, lines.data() + done, lines.size() - done);
    if (n <= 0) break;
    done += size_t(n);
  }
  ::close(fd);
}

std::string log_lines(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    protocol::Log log;
    log.level = "info";
    log.message = "line " + std::to_string(i) + " " + std::string(200, 'x');
    out += protocol::to_json(protocol::Event{{protocol::kSchemaVersion, "t", 0, 1000000 + i}, log}).dump() + "\n";
  }
  return out;
}
}  // namespace

TEST(EventChannel, EveryReadIsBoundedAndNothingIsLostWhenARankFloodsAndLeaves) {
  QTemporaryDir dir;
  EventChannel channel;
  ASSERT_TRUE(channel.listen(dir.filePath(QStringLiteral("events.sock"))));
  int received = 0, problems = 0;
  int64_t lastT = 0;
  bool ordered = true;
  QObject::connect(&channel, &EventChannel::eventsArrived, [&](const EventBatch& batch) {
    for (const auto& e : batch) {
      ordered = ordered && e.header.t_us > lastT;
      lastT = e.header.t_us;
      ++received;
    }
  });
  QObject::connect(&channel, &EventChannel::logLine, [&](const LogLine&) { ++problems; });
  bool closed = false;
  QObject::connect(&channel, &EventChannel::connectionClosed, [&] { closed = true; });
  const int n = 20000;  // ~5 MB
  const std::string lines = log_lines(n);
  const std::string path = channel.spec().mid(5).toStdString();
  std::thread rank(flood, path, lines);
  // The GUI thread is busy elsewhere for a while: the kernel and Qt buffer as much as they can.
  QTest::qWait(50);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int i = 0; i < 20; ++i) channel.flush();  // flush() must not read everything either
  TB_WAIT_FOR(closed, 30000);
  rank.join();
  channel.flush();
  EXPECT_EQ(received, n);
  EXPECT_TRUE(ordered);
  EXPECT_EQ(problems, 0) << "a line was cut";
  EXPECT_LE(channel.largestRead(), EventChannel::kMaxReadBytes);
  EXPECT_EQ(channel.openConnections(), 0);
}
