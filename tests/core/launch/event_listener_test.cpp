// The headless event channel: unix connections, and TCP connections that must present the
// trial's token in their first line (others are dropped and logged, their bytes never read as
// events). Writers are the worker's own (protocol::open_line_sink).
#include "core/launch/event_listener.h"

#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>

#include "core/launch/random_token.h"
#include "core/protocol/event_token.h"
#include "core/protocol/event_writer.h"

namespace tl = tunebench::launch;
namespace tp = tunebench::protocol;

namespace {

struct Collected {
  std::vector<tp::Event> events;
  std::vector<std::string> logs;
  std::vector<tp::ReadProblem> problems;
};

std::unique_ptr<tl::EventListener> make(Collected& c) {
  return std::make_unique<tl::EventListener>(tl::EventListener::Callbacks{
      [&c](tp::Event&& e) { c.events.push_back(std::move(e)); },
      [&c](const tp::ReadProblem& p) { c.problems.push_back(p); },
      [&c](const std::string& s) { c.logs.push_back(s); }});
}

void pump(tl::EventListener& l, const std::function<bool()>& done, double seconds = 5) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done() && std::chrono::steady_clock::now() < end) {
    std::vector<pollfd> fds;
    l.add_poll_fds(fds);
    ::poll(fds.data(), fds.size(), 20);
    l.handle(fds);
  }
}

tp::Event log_event(int rank, const std::string& text) {
  tp::Event e;
  e.header.rank = rank;
  e.header.trial = "t";
  e.payload = tp::Log{"info", text};
  return e;
}

int raw_tcp(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  return fd;
}

}  // namespace

TEST(EventToken, AcceptsOnlyTheExactToken) {
  using tp::TokenCheck;
  const std::string token = "5f2a";
  EXPECT_EQ(tp::event_token_line(token), "TUNEBENCH-TOKEN 5f2a\n");
  EXPECT_EQ(tp::check_event_token_line("TUNEBENCH-TOKEN 5f2a", token), TokenCheck::Ok);
  EXPECT_EQ(tp::check_event_token_line("TUNEBENCH-TOKEN 5f2a\r", token), TokenCheck::Ok);
  EXPECT_EQ(tp::check_event_token_line("TUNEBENCH-TOKEN 5f2b", token), TokenCheck::Wrong);
  EXPECT_EQ(tp::check_event_token_line("TUNEBENCH-TOKEN 5f2", token), TokenCheck::Wrong);
  EXPECT_EQ(tp::check_event_token_line("TUNEBENCH-TOKEN 5f2aa", token), TokenCheck::Wrong);
  EXPECT_EQ(tp::check_event_token_line("TUNEBENCH-TOKEN ", ""), TokenCheck::Wrong);
  EXPECT_EQ(tp::check_event_token_line("{\"v\":1,\"type\":\"log\"}", token), TokenCheck::Missing);
}

TEST(RandomToken, IsHexOfTheAskedLengthAndDiffers) {
  const auto a = tl::random_hex(32), b = tl::random_hex(32);
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

TEST(EventListener, UnixConnectionsDeliverEvents) {
  Collected c;
  auto l = make(c);
  const std::string path = std::filesystem::temp_directory_path() / ("tb-listen-" + std::to_string(::getpid()) + ".sock");
  std::string error;
  ASSERT_TRUE(l->listen_unix(path, &error)) << error;
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::others_all,
            std::filesystem::perms::none);
  {
    tp::EventWriter w0(tp::open_line_sink("unix:" + path));
    tp::EventWriter w1(tp::open_line_sink("unix:" + path));
    w0.write(log_event(0, "from 0"));
    w1.write(log_event(1, "from 1"));
    pump(*l, [&] { return c.events.size() == 2; });
  }
  pump(*l, [&] { return l->open_connections() == 0; });
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(l->open_connections(), 0);
  l.reset();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(EventListener, TcpConnectionsMustPresentTheToken) {
  Collected c;
  auto l = make(c);
  const std::string token = tl::random_hex(32);
  std::string error;
  ASSERT_TRUE(l->listen_tcp("127.0.0.1", 0, token, &error)) << error;
  ASSERT_GT(l->tcp_port(), 0);
  const std::string spec = "tcp://127.0.0.1:" + std::to_string(l->tcp_port());

  // A stranger without a token: its well-formed event is never read.
  const int stranger = raw_tcp(l->tcp_port());
  const std::string line = tp::format_line(log_event(0, "injected"));
  ASSERT_EQ(::write(stranger, line.data(), line.size()), ssize_t(line.size()));
  // One with a wrong token.
  tp::EventWriter wrong(tp::open_line_sink(spec, tl::random_hex(32)));
  wrong.write(log_event(0, "injected too"));
  // The rank with the token.
  tp::EventWriter rank(tp::open_line_sink(spec, token));
  rank.write(log_event(3, "genuine"));
  pump(*l, [&] { return c.events.size() == 1 && l->dropped_connections() == 2; });
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].header.rank, 3);
  EXPECT_EQ(c.events[0].as<tp::Log>().message, "genuine");
  EXPECT_EQ(l->dropped_connections(), 2);
  ASSERT_EQ(c.logs.size(), 2u);
  EXPECT_NE(c.logs[0].find("no token in its first line"), std::string::npos) << c.logs[0];
  EXPECT_NE(c.logs[1].find("wrong token"), std::string::npos) << c.logs[1];
  EXPECT_NE(c.logs[0].find("127.0.0.1:"), std::string::npos);  // who it was
  ::close(stranger);
}

TEST(EventListener, AnEndlessFirstLineIsDroppedWithoutBuffering) {
  Collected c;
  auto l = make(c);
  std::string error;
  ASSERT_TRUE(l->listen_tcp("127.0.0.1", 0, "tok", &error)) << error;
  const int fd = raw_tcp(l->tcp_port());
  const std::string junk(4096, 'x');
  ASSERT_EQ(::write(fd, junk.data(), junk.size()), ssize_t(junk.size()));
  pump(*l, [&] { return l->dropped_connections() == 1; });
  EXPECT_EQ(l->dropped_connections(), 1);
  EXPECT_TRUE(c.events.empty());
  ::close(fd);
}

TEST(EventListener, ATcpListenerNeedsAToken) {
  Collected c;
  auto l = make(c);
  std::string error;
  EXPECT_FALSE(l->listen_tcp("127.0.0.1", 0, "", &error));
  EXPECT_NE(error.find("token"), std::string::npos);
}
